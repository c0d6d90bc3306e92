import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../kernel/errors.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import type { SessionData } from '../../kernel/principal.js';
import { routeName } from '../../kernel/route-name.js';
import { VerificationGate } from './verification.gate.js';

const session: SessionData = { sessionId: 's', userId: 'u', storeId: 'st', roles: ['tenantUser'], email: 'a@b.c', mobile: null, fullname: null, expiresAt: '' };
const gate = new VerificationGate({} as AppConfig);

function refusal(s: SessionData, open: { during2FA?: boolean; mfaEnrollment?: boolean } = {}): { errCode: string; message: string } | undefined {
  try {
    gate.checkRequest(s, { method: 'GET', path: '/auth-api/v1/users/:id' }, open);
    return undefined;
  } catch (e) {
    return { errCode: (e as AppError).errCode, message: (e as AppError).messageCode ?? '' };
  }
}

describe('routeName', () => {
  it.each([
    ['GET', '/auth-api/v1/users', 'getUsers'],
    ['PATCH', '/auth-api/v1/users/:id', 'patchUsersById'],
    ['DELETE', '/auth-api/sessions/:id', 'deleteSessionsById'],
    ['POST', '/auth-api/bucket/userAvatars/upload', 'postBucketUserAvatarsUpload'],
    ['GET', '/notifications/unread', 'getNotificationsUnread'],
    ['POST', '/notifications/:id/read', 'postNotificationsByIdRead'],
    ['GET', '/auth-api/.well-known/jwks.json', 'getWellKnownJwksJson'],
  ])('%s %s → %s', (method, path, name) => {
    expect(routeName(path, method)).toBe(name);
  });
});

describe('the second-factor gate', () => {
  it('lets a session without a pending factor through', () => {
    expect(refusal(session)).toBeUndefined();
  });

  it('refuses a pending email factor first, then a mobile one, naming the route', () => {
    expect(refusal({ ...session, sessionNeedsEmail2FA: true, sessionNeedsMobile2FA: true })).toEqual({ errCode: 'EmailTwoFactorNeeded', message: 'errMsg_getUsersByIdRequiresEmail2FA' });
    expect(refusal({ ...session, sessionNeedsMobile2FA: true })).toEqual({ errCode: 'MobileTwoFactorNeeded', message: 'errMsg_getUsersByIdRequiresMobile2FA' });
  });

  it('lets routes open during 2FA, and API keys, through', () => {
    expect(refusal({ ...session, sessionNeedsEmail2FA: true }, { during2FA: true })).toBeUndefined();
    expect(refusal({ ...session, sessionNeedsEmail2FA: true, principal: 'apiKey' })).toBeUndefined();
  });

  it('refuses a pending authenticator-app factor after the email and mobile ones, naming the route', () => {
    expect(refusal({ ...session, sessionNeedsTotp2FA: true })).toEqual({ errCode: 'TotpTwoFactorNeeded', message: 'errMsg_getUsersByIdRequiresTotp2FA' });
    expect(refusal({ ...session, sessionNeedsEmail2FA: true, sessionNeedsTotp2FA: true })?.errCode).toBe('EmailTwoFactorNeeded');
  });

  it('a user who must enrol an app factor reaches the enrolment routes and those open during 2FA only', () => {
    const mustEnrol = { ...session, mfaEnrollmentNeeded: true };
    expect(refusal(mustEnrol)?.errCode).toBe('MfaEnrollmentRequired');
    expect(refusal(mustEnrol, { mfaEnrollment: true })).toBeUndefined();
    expect(refusal(mustEnrol, { during2FA: true })).toBeUndefined();
    // a second factor still pending closes the enrolment routes too
    expect(refusal({ ...mustEnrol, sessionNeedsEmail2FA: true }, { mfaEnrollment: true })?.errCode).toBe('EmailTwoFactorNeeded');
  });
});
