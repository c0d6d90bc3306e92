import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

// What every sign-in answer holds (login, a completed factor, a refresh, a social code, passkey).
export type SignInAnswer = Schemas['LoginResponse'] | Schemas['SecondFactorDoneResponse'] | Schemas['RefreshResponse'] | Schemas['SocialLoginResultResponse'];

// A step still to take before the session's token opens the service's routes.
export type SecondFactor = 'totp' | 'recoveryCode' | 'passkey' | 'email' | 'sms';

// The signed-in user as this client keeps it: the answer's fields, roles always a list, the
// second factors still pending, and the tokens (none in cookie mode: the browser holds them).
export interface Session {
  // The store the session belongs to, by codename ('' = the root store).
  store: string;
  tenantId: string;
  userId: string;
  sessionId: string;
  roles: string[];
  email: string | null;
  fullname: string | null;
  mobile?: string;
  accessToken?: string;
  refreshToken?: string;
  // When the access token expires (epoch milliseconds), when the service said or the token tells.
  expiresAt?: number;
  // Second factors that complete the sign-in (any one of them); empty once it is complete.
  pendingFactors: SecondFactor[];
  // The user's role requires a second factor it has not enrolled: only enrolment routes answer.
  mfaEnrollmentNeeded: boolean;
}

export function rolesOf(roleId: string | number | (string | number)[]): string[] {
  return (Array.isArray(roleId) ? roleId : [roleId]).map(String);
}

export function pendingFactorsOf(answer: Partial<Record<'sessionNeedsTotp2FA' | 'sessionNeedsPasskey2FA' | 'sessionNeedsEmail2FA' | 'sessionNeedsMobile2FA', true>>): SecondFactor[] {
  const factors: SecondFactor[] = [];
  if (answer.sessionNeedsTotp2FA) factors.push('totp', 'recoveryCode');
  if (answer.sessionNeedsPasskey2FA) factors.push('passkey');
  if (answer.sessionNeedsEmail2FA) factors.push('email');
  if (answer.sessionNeedsMobile2FA) factors.push('sms');
  return factors;
}

// The `exp` of a JWT, read without checking it (the service checks; this only times a refresh).
export function expiryOf(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const json = JSON.parse(atob(base64 + '==='.slice((base64.length + 3) % 4))) as { exp?: unknown };
    return typeof json.exp === 'number' ? json.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

// The session an answer describes. An answer without tokens (a completed factor that keeps the
// token) keeps the previous session's; cookie mode keeps none.
export function sessionOf(store: string, answer: SignInAnswer, previous: Session | undefined, keepTokens: boolean): Session {
  const session: Session = {
    store,
    tenantId: answer.tenantId,
    userId: answer.userId,
    sessionId: answer.sessionId,
    roles: rolesOf(answer.roleId),
    email: answer.email,
    fullname: answer.fullname,
    pendingFactors: pendingFactorsOf(answer),
    mfaEnrollmentNeeded: answer.mfaEnrollmentNeeded === true,
  };
  if (answer.mobile !== undefined) session.mobile = answer.mobile;
  if (!keepTokens) {
    const expiresAt = 'accessTokenExpiresAt' in answer && answer.accessTokenExpiresAt ? Date.parse(answer.accessTokenExpiresAt) : previous?.expiresAt;
    if (expiresAt !== undefined && !Number.isNaN(expiresAt)) session.expiresAt = expiresAt;
    return session;
  }
  const accessToken = answer.accessToken ?? previous?.accessToken;
  const refreshToken = ('refreshToken' in answer ? answer.refreshToken : undefined) ?? previous?.refreshToken;
  if (accessToken) session.accessToken = accessToken;
  if (refreshToken) session.refreshToken = refreshToken;
  const stated = 'accessTokenExpiresAt' in answer && answer.accessTokenExpiresAt ? Date.parse(answer.accessTokenExpiresAt) : undefined;
  const expiresAt = stated ?? (accessToken ? expiryOf(accessToken) : undefined);
  if (expiresAt !== undefined && !Number.isNaN(expiresAt)) session.expiresAt = expiresAt;
  return session;
}
