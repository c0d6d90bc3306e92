import type { SessionData } from './principal.js';

// What a sign-in proved, in the words tokens carry (docs/adr/0022-sign-in-assurance.md).
// `amr` values are RFC 8176's where it has one: `pwd` a password, `otp` an authenticator app's
// code or a recovery code, `hwk`/`swk` a passkey bound to its device or synced, `sms` a code sent
// by SMS, `mfa` two methods (or a passkey with user verification, two factors in one); `email` a
// code or link sent by email and `fed` a social or single sign-on provider, as widely used.
export type AuthMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'email' | 'sms' | 'fed' | 'mfa';

// `pending`: a second factor or an app factor's enrolment is still due; such a token serves only
// to finish the sign-in. `aal2`: two methods; `aal1`: one.
export type Acr = 'pending' | 'aal1' | 'aal2';

export const PENDING_ACR: Acr = 'pending';

// The methods as tokens say them: those proved, each once, and `mfa` when two differ.
export function amrOf(proved: readonly string[]): string[] {
  const methods = [...new Set(proved)];
  if (!methods.includes('mfa') && methods.length >= 2) methods.push('mfa');
  return methods;
}

// Whether the sign-in still owes a factor (or the enrolment of one its role requires).
export function signInPending(session: SessionData): boolean {
  return !!(session.sessionNeedsEmail2FA || session.sessionNeedsMobile2FA || session.sessionNeedsTotp2FA || session.sessionNeedsPasskey2FA || session.mfaEnrollmentNeeded);
}

export function acrOf(session: SessionData): Acr {
  if (signInPending(session)) return 'pending';
  return session.amr?.includes('mfa') ? 'aal2' : 'aal1';
}
