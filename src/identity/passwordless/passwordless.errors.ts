import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Passwordless sign-in. Wrong, used, expired and exhausted codes answer the verification codes'
// errors (VerificationCodeInvalid, VerificationCodeExpired, VerificationAttemptsExceeded).
export const PASSWORDLESS_ERRORS = defineErrors('src/identity/passwordless/passwordless.errors.ts', {
  PasswordlessLoginDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_PasswordlessLoginDisabled', description: 'passwordless sign-in is not enabled (settings `passwordlessLogin.enabled`)' },
  PasswordlessChannelDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_PasswordlessChannelDisabled', description: 'sign-in by this kind of address (email or mobile) is not among settings `passwordlessLogin.channels`' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof PASSWORDLESS_ERRORS> {}
}
