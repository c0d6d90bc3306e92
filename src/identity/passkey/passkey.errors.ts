import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Passkeys (WebAuthn): enrolment, sign-in and their ceremonies' challenges.
export const PASSKEY_ERRORS = defineErrors('src/identity/passkey/passkey.errors.ts', {
  WebAuthnNotConfigured: { status: HttpStatus.NOT_FOUND, message: 'errMsg_WebAuthnNotConfigured', description: 'a passkey route called while passkeys are off (settings `webauthn` is null)' },
  PasskeyNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_PasskeyNotFound', description: 'no such passkey of yours, or a sign-in with a passkey unknown in this store (deleted, or enrolled in another store)' },
  PasskeyVerificationFailed: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_PasskeyVerificationFailed', description: 'the authenticator\'s answer did not verify: wrong origin or relying party, bad signature, no user verification, a signature counter that went backwards, or a malformed response' },
  PasskeyChallengeExpired: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_PasskeyChallengeExpired', description: 'the ceremony\'s challenge is unknown, already used or older than 5 minutes: ask for new options' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof PASSKEY_ERRORS> {}
}
