import { Injectable } from '@nestjs/common';
import bcrypt from 'bcrypt';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';

export const PASSWORD_MIN_CHARS = 8;
// bcrypt reads at most 72 bytes; longer input is refused rather than silently truncated.
export const PASSWORD_MAX_BYTES = 72;

// The one password policy. Registration, change, reset and the seed set passwords through
// PasswordHasher.hash; login and current-password checks go through PasswordHasher.verify.
export function passwordPolicyViolation(password: string): string | undefined {
  if ([...password].length < PASSWORD_MIN_CHARS) return `password must be at least ${PASSWORD_MIN_CHARS} characters`;
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) return `password must be at most ${PASSWORD_MAX_BYTES} bytes`;
  return undefined;
}

export function checkPasswordPolicy(password: string): void {
  const violation = passwordPolicyViolation(password);
  if (violation) throw new AppError('WeakPassword', violation);
}

@Injectable()
export class PasswordHasher {
  private pending = 0;

  constructor(private readonly config: AppConfig) {}

  // For setting a password (registration, change, reset): the policy, then the hash.
  async hash(password: string): Promise<string> {
    checkPasswordPolicy(password);
    return this.bounded(() => bcrypt.hash(password, this.config.env.BCRYPT_COST));
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
