import type { ErrCode } from '../../kernel/errors.js';

// Codes of the verification flows and the second-factor gate; their status and message live in
// the one catalogue (src/kernel/errors.ts). EmailVerificationNeeded and MobileVerificationNeeded
// (login of an unverified user) are there from before.
export const VERIFICATION_ERR_CODES = [
  'EmailVerificationNeeded',
  'MobileVerificationNeeded',
  'EmailTwoFactorNeeded',
  'MobileTwoFactorNeeded',
  'VerificationFlowDisabled',
  'VerificationResendTooSoon',
  'VerificationCodeInvalid',
  'VerificationCodeExpired',
  'VerificationAttemptsExceeded',
  'SecondFactorNotPending',
] as const satisfies readonly ErrCode[];
