import type { components } from './schema';

export type LoginAnswer = components['schemas']['LoginResponse'];

// The signed-in administrator: the login answer, the store it signed in to ('' = root) and, for a
// SaaS administrator, the store it is looking at.
export interface Session {
  login: LoginAnswer;
  store: string;
  target: string;
}

// Kept in memory, and in sessionStorage so that a reload or a deep link in the same tab stays
// signed in. Not localStorage: sessionStorage dies with the tab and is not shared with other
// tabs, so a forgotten console signs itself out when closed. Not a cookie of our own: the API
// takes the Bearer header, and the strict CSP (script-src 'self') is what keeps other scripts
// from reading it.
const KEY = 'console.session';
let current: Session | undefined = read();
const listeners = new Set<(s: Session | undefined) => void>();

function read(): Session | undefined {
  try {
    const text = sessionStorage.getItem(KEY);
    return text ? (JSON.parse(text) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export function session(): Session | undefined {
  return current;
}

export function setSession(next: Session | undefined): void {
  current = next;
  if (next) sessionStorage.setItem(KEY, JSON.stringify(next));
  else sessionStorage.removeItem(KEY);
  for (const listener of listeners) listener(next);
}

// The answer of a completed factor or of a refresh is the session as it now is: it replaces the
// one held (its pending flags included), keeping the tokens where it gives none.
export function updateLogin(login: Omit<LoginAnswer, 'accessToken'> & { accessToken?: string }): void {
  if (!current) return;
  const accessToken = login.accessToken ?? current.login.accessToken;
  const refreshToken = login.refreshToken ?? current.login.refreshToken;
  setSession({ ...current, login: { ...login, accessToken, refreshToken } });
}

export function onSession(listener: (s: Session | undefined) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function rolesOf(login: { roleId: string | string[] | number | (string | number)[] }): string[] {
  return (Array.isArray(login.roleId) ? login.roleId : [login.roleId]).map(String);
}

export const ADMIN_ROLES = ['superAdmin', 'admin', 'saasAdmin', 'tenantOwner', 'tenantAdmin'];
export const SAAS_ADMIN_ROLES = ['superAdmin', 'saasAdmin'];

export function isAdmin(s: Session): boolean {
  return rolesOf(s.login).some((r) => ADMIN_ROLES.includes(r));
}

// The store the console's screens act on, as the notices name it.
export function storeName(s: Session): string {
  return s.target ? `store ${s.target}` : 'the root store';
}

// A SaaS administrator looking at another store than the one it signed in to.
export function looksElsewhere(s: Session): boolean {
  return s.target !== s.store;
}

// A SaaS administrator (root store) may look at any store.
export function isSaasAdmin(s: Session): boolean {
  return s.store === '' && rolesOf(s.login).some((r) => SAAS_ADMIN_ROLES.includes(r));
}

// Anything still to do before the console's screens answer.
// (An app code or a passkey: the `totp` step offers the passkey too when the user holds both.)
export function pendingStep(login: LoginAnswer): 'totp' | 'passkey' | 'email' | 'mobile' | 'enrol' | undefined {
  if (login.sessionNeedsTotp2FA) return 'totp';
  if (login.sessionNeedsPasskey2FA) return 'passkey';
  if (login.sessionNeedsEmail2FA) return 'email';
  if (login.sessionNeedsMobile2FA) return 'mobile';
  if (login.mfaEnrollmentNeeded) return 'enrol';
  return undefined;
}
