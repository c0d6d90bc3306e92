import { createClient, webStorage, type ServiceClient, type Session as ClientSession, type TokenStorage } from '@svc/client';
import type { components } from './schema';

// The service's project codename names the store header (`<project>-store-codename`); the service
// writes it into the page it serves (console-static.ts), and it is `svc` by default.
export const PROJECT = document.querySelector<HTMLMetaElement>('meta[name="console-project"]')?.content || 'svc';
export const STORE_HEADER = `${PROJECT}-store-codename`;

// The signed-in administrator: the session @svc/client keeps (the store it signed in to, '' =
// root, its roles, the steps still pending, its tokens) and, for a SaaS administrator, the store
// it is looking at.
export type Session = ClientSession & { target: string };

// Kept in memory, and in sessionStorage so that a reload or a deep link in the same tab stays
// signed in. Not localStorage: sessionStorage dies with the tab and is not shared with other
// tabs, so a forgotten console signs itself out when closed. Not a cookie of our own: the API
// takes the Bearer header, and the strict CSP (script-src 'self') is what keeps other scripts
// from reading it.
const KEY = 'console.session';
const tab = webStorage(sessionStorage);

function stored(): Session | undefined {
  try {
    const text = sessionStorage.getItem(KEY);
    const s = text ? (JSON.parse(text) as Session) : undefined;
    // One kept by an older console (another shape) is dropped: the administrator signs in again.
    if (s && !Array.isArray(s.pendingFactors)) return void sessionStorage.removeItem(KEY);
    return s && { ...s, target: typeof s.target === 'string' ? s.target : s.store };
  } catch {
    return undefined;
  }
}

let current: Session | undefined = stored();
let target = current?.target ?? '';
const listeners = new Set<(s: Session | undefined) => void>();

// The client writes its session into this one entry; the looked-at store is kept beside it, so
// that it survives a reload and goes with a sign-out.
const storage: TokenStorage = {
  getItem: (key) => tab.getItem(key),
  setItem: (key, value) => {
    const next = JSON.parse(value) as ClientSession;
    // A new sign-in looks at its own store.
    if (!current) target = next.store;
    tab.setItem(key, JSON.stringify({ ...next, target }));
  },
  removeItem: (key) => tab.removeItem(key),
};

// One client for the tab (sessionStorage is per tab: no Web Locks or BroadcastChannel between
// tabs), on the service that serves the page. Its token is refreshed ahead of expiry and on a
// 401, once for every concurrent call.
function open(): ServiceClient {
  const opened = createClient({ baseUrl: location.origin, storage, project: PROJECT, storageKey: KEY, crossTab: false });
  opened.onSessionChange((s) => opened === client && publish(s));
  return opened;
}

export let client: ServiceClient = open();

// The client of the looked-at store (the signed-in one's own, or root, when none).
const targeted = () => (target ? client.withStore(target) : client);

// Every route, typed from the OpenAPI document (openapi-fetch), on the looked-at store: a call
// about the administrator itself names its own store with `own()` (client.ts).
export let api = targeted().api;

function publish(s: ClientSession | undefined): void {
  if (!s) target = '';
  current = s && { ...s, target };
  api = targeted().api;
  for (const listener of listeners) listener(current);
}

export function session(): Session | undefined {
  return current;
}

export function onSession(listener: (s: Session | undefined) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

// The client of a sign-in to `store` ('' = root): its steps keep the session here, and the
// console then looks at that store.
export function signingIn(store: string): ServiceClient {
  return store ? client.withStore(store) : client;
}

// A SaaS administrator looks at another store: every call then carries its header.
export function lookAt(codename: string): void {
  if (!current) return;
  target = codename;
  const s = stored();
  if (s) tab.setItem(KEY, JSON.stringify({ ...s, target }));
  publish(current);
}

// An enrolment the role required completes the sign-in with fresh tokens: a passkey's the client
// takes itself; the answer of POST /auth-api/mfa/totp/confirm is given to it here.
export function adoptCompleted(answer: components['schemas']['SecondFactorDoneResponse']): void {
  if (current?.sessionId !== answer.sessionId) return;
  void client.adopt(answer);
}

// Ends the session at the service (so its token dies everywhere), then forgets it here.
export function signOut(): Promise<void> {
  return client.signOut();
}

export function rolesOf(login: { roleId: string | string[] | number | (string | number)[] }): string[] {
  return (Array.isArray(login.roleId) ? login.roleId : [login.roleId]).map(String);
}

export const ADMIN_ROLES = ['superAdmin', 'admin', 'saasAdmin', 'tenantOwner', 'tenantAdmin'];
export const SAAS_ADMIN_ROLES = ['superAdmin', 'saasAdmin'];

export function isAdmin(s: Session): boolean {
  return s.roles.some((r) => ADMIN_ROLES.includes(r));
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
  return s.store === '' && s.roles.some((r) => SAAS_ADMIN_ROLES.includes(r));
}

// Anything still to do before the console's screens answer.
// (An app code or a passkey: the `totp` step offers the passkey too when the user holds both.)
export function pendingStep(s: Session): 'totp' | 'passkey' | 'email' | 'mobile' | 'enrol' | undefined {
  const pending = s.pendingFactors;
  if (pending.includes('totp')) return 'totp';
  if (pending.includes('passkey')) return 'passkey';
  if (pending.includes('email')) return 'email';
  if (pending.includes('sms')) return 'mobile';
  if (s.mfaEnrollmentNeeded) return 'enrol';
  return undefined;
}
