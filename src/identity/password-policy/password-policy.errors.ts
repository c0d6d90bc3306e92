import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// A new password refused by the policy beyond its length (WeakPassword, user.errors.ts).
export const PASSWORD_POLICY_ERRORS = defineErrors('src/identity/password-policy/password-policy.errors.ts', {
  PasswordTooWeak: {
    status: HttpStatus.BAD_REQUEST,
    message: 'errMsg_PasswordTooWeak',
    description: 'the password is too easy to guess (`passwordPolicy.minScore`); `detail` says what to do in words, and the body carries `score`, `minScore` and `feedback` (`warning`, `suggestions`)',
  },
  PasswordBreached: {
    status: HttpStatus.BAD_REQUEST,
    message: 'errMsg_PasswordBreached',
    description: 'the password appears in known data breaches (`passwordPolicy.rejectBreached`); the body carries `count`',
  },
  PasswordCheckUnavailable: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    message: 'errMsg_PasswordCheckUnavailable',
    description: 'the breached-password service did not answer in time, answered an error or more than a range answer (256 KB), and `passwordPolicy.breachedCheck.onUnavailable` is `refuse`; retry later',
  },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof PASSWORD_POLICY_ERRORS> {}
}
