import { Injectable } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { routeName } from '../../kernel/route-name.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { PendingFactors, SessionData } from '../../kernel/principal.js';
import type { UserEntity } from '../user/index.js';
import { VerificationSection } from './verification.settings.js';
import { SessionSection } from '../session/session.settings.js';

export interface RegistrationFlags {
  emailVerificationNeeded?: true;
  mobileVerificationNeeded?: true;
}

// What the verification settings ask of logins and of requests made with a login.
@Injectable()
export class VerificationGate {
  constructor(private readonly config: AppConfig) {}

  // After the password matched: refuses an unverified identifier the settings require, and
  // names the second factors the new session must complete.
  checkLogin(user: UserEntity): PendingFactors {
    const s = { ...this.config.section(VerificationSection), webauthn: this.config.section(SessionSection).webauthn };
    if (s.emailVerificationRequiredForLogin && user.email && !user.emailVerified) throw new AppError('EmailVerificationNeeded');
    if (s.mobileVerificationRequiredForLogin && user.mobile && !user.mobileVerified) throw new AppError('MobileVerificationNeeded');
    // A factor needs somewhere to send its code: a user without the identifier has none to pass.
    // The user's own app factors (an authenticator app, a passkey) are asked whatever the
    // settings: a factor that a password alone passes protects nothing.
    return {
      email2FA: s.email2FARequiredForLogin && !!user.email,
      mobile2FA: s.mobile2FARequiredForLogin && !!user.mobile,
      totp2FA: user.totpEnabled,
      passkey2FA: user.hasPasskey && !!s.webauthn,
    };
  }

  // For the registration answer: the client starts these flows next.
  registrationFlags(user: UserEntity): RegistrationFlags {
    const flows = this.config.section(VerificationSection).verification.flows;
    return {
      ...(flows['email-verification'].enabled && user.email && !user.emailVerified && { emailVerificationNeeded: true }),
      ...(flows['mobile-verification'].enabled && user.mobile && !user.mobileVerified && { mobileVerificationNeeded: true }),
    };
  }

  // A login with a second factor pending reaches only the routes open during 2FA; one that must
  // still enrol an app factor (mfaRequiredForRoles) only those and the enrolment routes. `route`
  // is the Express route path; the message names it (`errMsg_getUsersByIdRequiresEmail2FA`).
  // `tokenPending`: the access token was issued before the sign-in was complete (its `acr` is
  // `pending`): it finishes the sign-in and nothing else, even once the session is complete.
  checkRequest(session: SessionData, route: { method: string; path: string }, open: { during2FA?: boolean; mfaEnrollment?: boolean }, tokenPending = false): void {
    if (open.during2FA || session.principal === 'apiKey') return;
    const name = () => routeName(route.path, route.method);
    if (session.sessionNeedsEmail2FA) throw new AppError('EmailTwoFactorNeeded', 'complete the email second factor first', {}, `errMsg_${name()}RequiresEmail2FA`);
    if (session.sessionNeedsMobile2FA) throw new AppError('MobileTwoFactorNeeded', 'complete the mobile second factor first', {}, `errMsg_${name()}RequiresMobile2FA`);
    const passkeyToo = session.sessionNeedsPasskey2FA ? ' (or a passkey)' : '';
    if (session.sessionNeedsTotp2FA) throw new AppError('TotpTwoFactorNeeded', `complete the authenticator-app factor${passkeyToo} first`, {}, `errMsg_${name()}RequiresTotp2FA`);
    if (session.sessionNeedsPasskey2FA) throw new AppError('PasskeyTwoFactorNeeded', 'complete the passkey factor first', {}, `errMsg_${name()}RequiresPasskey2FA`);
    if (open.mfaEnrollment) return;
    if (session.mfaEnrollmentNeeded) throw new AppError('MfaEnrollmentRequired', 'your role requires an authenticator app or a passkey: enrol one first');
    if (tokenPending) throw new AppError('AccessTokenPending', 'this access token was issued before the sign-in was complete: use the one that completing it answered');
  }
}
