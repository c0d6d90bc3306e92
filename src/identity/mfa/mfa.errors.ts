import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Authenticator apps (TOTP) and recovery codes.
export const MFA_ERRORS = defineErrors('src/identity/mfa/mfa.errors.ts', {
  TotpCodeInvalid: { status: HttpStatus.FORBIDDEN, message: 'errMsg_TotpCodeInvalid', description: 'a wrong authenticator-app or recovery code, or one already used' },
  TotpAttemptsExceeded: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_TotpAttemptsExceeded', description: 'too many wrong codes: a pending sign-in ends at the 5th (log in again); otherwise wait for `Retry-After`' },
  TotpNotEnabled: { status: HttpStatus.CONFLICT, message: 'errMsg_TotpNotEnabled', description: 'the user has no authenticator app (or its setup was not started)' },
  TotpAlreadyEnabled: { status: HttpStatus.CONFLICT, message: 'errMsg_TotpAlreadyEnabled', description: 'an authenticator app is already enabled: disable it before setting up another' },
  TotpSecretUnreadable: { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'errMsg_TotpSecretUnreadable', description: 'the stored authenticator-app secrets cannot be opened with the configured `KEY_ENCRYPTION_SECRET` (changed without `KEY_ENCRYPTION_SECRET_PREVIOUS`): the operator is told in the log ([rotation](operations.md#rotating-key_encryption_secret))' },
  MfaCredentialMissing: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_MfaCredentialMissing', description: 'disabling the authenticator app needs `code` (a current one) or `password`' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof MFA_ERRORS> {}
}
