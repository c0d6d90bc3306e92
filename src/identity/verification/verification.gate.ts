import { Injectable } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { PendingFactors, SessionData } from '../session/session.types.js';
import type { UserEntity } from '../user/user.entity.js';

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
    const s = this.config.settings;
    if (s.emailVerificationRequiredForLogin && user.email && !user.emailVerified) throw new AppError('EmailVerificationNeeded');
    if (s.mobileVerificationRequiredForLogin && user.mobile && !user.mobileVerified) throw new AppError('MobileVerificationNeeded');
    // A factor needs somewhere to send its code: a user without the identifier has none to pass.
    return { email2FA: s.email2FARequiredForLogin && !!user.email, mobile2FA: s.mobile2FARequiredForLogin && !!user.mobile };
  }

  // For the registration answer: the client starts these flows next.
  registrationFlags(user: UserEntity): RegistrationFlags {
    const flows = this.config.settings.verification.flows;
    return {
      ...(flows['email-verification'].enabled && user.email && !user.emailVerified && { emailVerificationNeeded: true }),
      ...(flows['mobile-verification'].enabled && user.mobile && !user.mobileVerified && { mobileVerificationNeeded: true }),
    };
  }

  // A login with a second factor pending reaches only the routes open during 2FA. `route` is
  // the Express route path; the message names it (`errMsg_getUsersByIdRequiresEmail2FA`).
  checkRequest(session: SessionData, route: { method: string; path: string }, openDuring2FA: boolean): void {
    if (openDuring2FA || session.principal === 'apiKey') return;
    if (session.sessionNeedsEmail2FA) throw new AppError('EmailTwoFactorNeeded', 'complete the email second factor first', {}, `errMsg_${routeName(route.path, route.method)}RequiresEmail2FA`);
    if (session.sessionNeedsMobile2FA) throw new AppError('MobileTwoFactorNeeded', 'complete the mobile second factor first', {}, `errMsg_${routeName(route.path, route.method)}RequiresMobile2FA`);
  }
}

// `GET /auth-api/v1/users/:id` → getUsersById: the method, then the path without the service
// prefix and version, parameters as `By<Name>`.
export function routeName(route: string, method: string): string {
  const words = route
    .split('/')
    .filter((p) => p && p !== 'auth-api' && !/^v\d+$/.test(p))
    .map((p) => (p.startsWith(':') ? `By${cap(p.slice(1))}` : p.split(/[^A-Za-z0-9]+/).map(cap).join('')));
  return method.toLowerCase() + words.join('');
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
