import { Injectable } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BreachedPasswords } from './breached-passwords.js';
import { guessableWords, strength } from './strength.js';
import { PasswordPolicySection } from './password-policy.settings.js';

// bcrypt reads at most 72 bytes; longer input is refused rather than silently truncated.
export const PASSWORD_MAX_BYTES = 72;

// Whose password it is: with `userInputs`, these count as guessable words.
export interface PasswordSubject {
  email?: string | null;
  mobile?: string | null;
  fullname?: string | null;
  name?: string | null;
  surname?: string | null;
  storeName?: string | null;
}

// What a form needs to know before sending a password (GET /auth-api/password-policy).
export interface PasswordRules {
  minLength: number;
  maxBytes: number;
  minScore: number;
  rejectBreached: boolean;
  userInputs: boolean;
}

// The rules a new password must meet, wherever one is set (settings `passwordPolicy`). Login
// never applies them: it only tells whether the password it accepted would pass today.
@Injectable()
export class PasswordPolicyService {
  constructor(
    private readonly config: AppConfig,
    private readonly breaches: BreachedPasswords,
  ) {}

  rules(): PasswordRules {
    const p = this.config.section(PasswordPolicySection).passwordPolicy;
    return { minLength: p.minLength, maxBytes: PASSWORD_MAX_BYTES, minScore: p.minScore, rejectBreached: p.rejectBreached, userInputs: p.userInputs };
  }

  // Length (400 WeakPassword), strength (400 PasswordTooWeak with the score and the feedback),
  // then breaches (400 PasswordBreached with the count; 503 PasswordCheckUnavailable when the
  // range service is down and the settings say refuse). The cheap checks go first.
  async check(password: string, subject: PasswordSubject): Promise<void> {
    const p = this.config.section(PasswordPolicySection).passwordPolicy;
    const tooShortOrLong = lengthViolation(password, p.minLength);
    if (tooShortOrLong) throw new AppError('WeakPassword', tooShortOrLong);
    if (p.minScore > 0) {
      const { score, feedback } = await strength(password, this.inputs(subject));
      if (score < p.minScore) {
        throw new AppError('PasswordTooWeak', tooWeakSentence(feedback), {}, undefined, { score, minScore: p.minScore, feedback });
      }
    }
    if (!p.rejectBreached) return;
    const count = await this.breaches.count(password);
    if (count === undefined) {
      if (p.breachedCheck.onUnavailable === 'refuse') throw new AppError('PasswordCheckUnavailable', 'the breached-password check did not answer; retry later', { 'Retry-After': '5' });
      return;
    }
    if (count > 0) throw new AppError('PasswordBreached', `this password appears ${count} times in known data breaches`, {}, undefined, { count });
  }

  // A password just accepted at login that a new password could not be today: too short for
  // `minLength` or too guessable for `minScore`. Breaches are not looked up at login (no call to
  // the range service on the login path).
  async recommendsChange(password: string, subject: PasswordSubject): Promise<boolean> {
    const p = this.config.section(PasswordPolicySection).passwordPolicy;
    if (lengthViolation(password, p.minLength)) return true;
    return p.minScore > 0 && (await strength(password, this.inputs(subject))).score < p.minScore;
  }

  private inputs(subject: PasswordSubject): string[] {
    if (!this.config.section(PasswordPolicySection).passwordPolicy.userInputs) return [];
    return guessableWords([subject.email, subject.mobile, subject.fullname, subject.name, subject.surname, subject.storeName]);
  }
}

// What a person reads: what is wrong and what to do (the estimator's advice), not its score,
// which stays in the body's `score` and `minScore` for clients that want it.
export function tooWeakSentence(feedback: { warning: string | null; suggestions: readonly string[] }): string {
  const advice = feedback.suggestions.length ? feedback.suggestions : ['Use a longer password: a few words that do not belong together.'];
  return ['the password is too easy to guess.', feedback.warning, ...advice].filter(Boolean).join(' ');
}

export function lengthViolation(password: string, minLength: number): string | undefined {
  if ([...password].length < minLength) return `password must be at least ${minLength} characters`;
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) return `password must be at most ${PASSWORD_MAX_BYTES} bytes`;
  return undefined;
}
