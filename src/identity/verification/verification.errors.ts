import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// The verification flows and the second-factor gate.
export const VERIFICATION_ERRORS = defineErrors('src/identity/verification/verification.errors.ts', {
  EmailVerificationNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_EmailNotVerified', description: 'login before the email is verified, when required' },
  MobileVerificationNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_MobileNotVerified', description: 'login before the mobile is verified, when required' },
  EmailTwoFactorNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_EmailTwoFactorNeeded', description: 'the login\'s email second factor is pending; `message` names the route (`errMsg_<route>RequiresEmail2FA`)' },
  MobileTwoFactorNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_MobileTwoFactorNeeded', description: 'the login\'s mobile second factor is pending; `message` names the route (`errMsg_<route>RequiresMobile2FA`)' },
  TotpTwoFactorNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_TotpTwoFactorNeeded', description: 'the login\'s authenticator-app factor is pending; `message` names the route (`errMsg_<route>RequiresTotp2FA`)' },
  PasskeyTwoFactorNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_PasskeyTwoFactorNeeded', description: 'the login\'s passkey factor is pending; `message` names the route (`errMsg_<route>RequiresPasskey2FA`)' },
  AccessTokenPending: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_AccessTokenPending', description: 'an access token issued while the sign-in was pending (`acr: pending`), used after it completed: use the token the completion answered' },
  MfaEnrollmentRequired: { status: HttpStatus.FORBIDDEN, message: 'errMsg_MfaEnrollmentRequired', description: 'the user\'s role requires an app factor (`mfaRequiredForRoles`): enrol a TOTP app or a passkey first' },
  VerificationFlowDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_VerificationFlowDisabled', description: 'the verification flow is not enabled in the settings' },
  VerificationResendTooSoon: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_VerificationResendTooSoon', description: 'a new code asked for within `resendTimeWindow`' },
  VerificationCodeInvalid: { status: HttpStatus.FORBIDDEN, message: 'errMsg_VerificationCodeInvalid', description: 'a wrong, used or foreign code' },
  VerificationCodeExpired: { status: HttpStatus.FORBIDDEN, message: 'errMsg_VerificationCodeExpired', description: 'the code is older than `expireTimeWindow`' },
  VerificationAttemptsExceeded: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_VerificationAttemptsExceeded', description: '5 wrong tries: the code is dead; start again' },
  FrontendUrlNotAllowed: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_FrontendUrlNotAllowed', description: 'a `frontendUrl` in a request that sends a link (verification, password reset, passwordless sign-in) other than settings `verification.frontendUrl` or one of `verification.frontendUrls`, exactly' },
  SecondFactorNotPending: { status: HttpStatus.CONFLICT, message: 'errMsg_SecondFactorNotPending', description: 'a second-factor flow for a login that does not need it' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof VERIFICATION_ERRORS> {}
}
