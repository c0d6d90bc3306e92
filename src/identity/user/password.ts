import { Injectable } from '@nestjs/common';
import bcrypt from 'bcrypt';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { lengthViolation, PASSWORD_MAX_BYTES, PasswordPolicyService, type PasswordSubject } from '../password-policy/index.js';

// The least any stored password has, whatever `passwordPolicy.minLength` says today: a password
// shorter than this can match no stored hash.
export const PASSWORD_MIN_CHARS = 8;
export { PASSWORD_MAX_BYTES };

// The length rules every stored password meets (8 characters to 72 bytes). New passwords people
// choose meet the whole policy too (PasswordHasher.hash); login checks only these.
export function passwordPolicyViolation(password: string): string | undefined {
  return lengthViolation(password, PASSWORD_MIN_CHARS);
}

export function checkPasswordPolicy(password: string): void {
  const violation = passwordPolicyViolation(password);
  if (violation) throw new AppError('WeakPassword', violation);
}

@Injectable()
export class PasswordHasher {
  private pending = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly policy: PasswordPolicyService,
  ) {}

  // A password a person chose (registration, user creation, change, reset): the whole policy
  // (settings `passwordPolicy`: length, strength against the subject's own words, breaches),
  // then the hash.
  async hash(password: string, subject: PasswordSubject): Promise<string> {
    await this.policy.check(password, subject);
    return this.bounded(() => bcrypt.hash(password, this.config.env.BCRYPT_COST));
  }

  // A password nobody chose at a form: the operator's (the seed checks it at boot) or a random
  // one (an account created by a social provider). The length rules only.
  async hashUnchosen(password: string): Promise<string> {
    checkPasswordPolicy(password);
    return this.bounded(() => bcrypt.hash(password, this.config.env.BCRYPT_COST));
  }

  // The whole policy without the hash: a caller that must refuse before doing anything else.
  check(password: string, subject: PasswordSubject): Promise<void> {
    return this.policy.check(password, subject);
  }

  // Whether a password accepted at login would be refused as a new one (length or strength; the
  // breach service is never asked at login).
  recommendsChange(password: string, subject: PasswordSubject): Promise<boolean> {
    return this.policy.recommendsChange(password, subject);
  }

  // A password outside the policy can match no stored hash: false without running bcrypt, so a
  // 1 MB guess costs nothing and 72 matching bytes plus anything never pass as the password.
  async verify(password: string, hash: string): Promise<boolean> {
    if (passwordPolicyViolation(password)) return false;
    return this.bounded(() => bcrypt.compare(password, hash));
  }

  // 503 with Retry-After while BCRYPT_MAX_PENDING hashes are in progress. Login calls it before
  // its database work too, so during a burst a newcomer is answered at once.
  assertCapacity(): void {
    if (this.pending >= this.config.env.BCRYPT_MAX_PENDING) {
      throw new AppError('ServiceUnavailable', 'too many password checks in progress; retry shortly', { 'Retry-After': '1' });
    }
  }

  // bcrypt runs on the libuv thread pool; past BCRYPT_MAX_PENDING, answer 503 now instead of
  // queueing behind a burst.
  private async bounded<T>(work: () => Promise<T>): Promise<T> {
    this.assertCapacity();
    this.pending++;
    try {
      return await work();
    } finally {
      this.pending--;
    }
  }
}
