import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { session, setSession, updateLogin } from './session';

// The service's project codename names the store header (`<project>-store-codename`); the service
// writes it into the page it serves (console-static.ts), and it is `svc` by default.
const PROJECT = document.querySelector<HTMLMetaElement>('meta[name="console-project"]')?.content || 'svc';
export const STORE_HEADER = `${PROJECT}-store-codename`;

// Every call carries the signed-in administrator's token and the targeted store (none: root).
const credentials: Middleware = {
  onRequest({ request }) {
    const s = session();
    if (s && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${s.login.accessToken}`);
    const store = request.headers.get(STORE_HEADER) ?? s?.target ?? '';
    if (store) request.headers.set(STORE_HEADER, store);
    else request.headers.delete(STORE_HEADER);
    return request;
  },
};

let refreshing: Promise<boolean> | undefined;

// With short access tokens (settings accessTokenMinutes) the login answered a refresh token: on a
// 401, one POST /auth-api/refresh (shared by concurrent calls), then the call once more. A call
// whose 401 comes after another call's refresh has ended (it was sent with the old token) is only
// sent again with the new one.
async function refresh(): Promise<boolean> {
  const s = session();
  if (!s?.login.refreshToken) return false;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (s.store) headers[STORE_HEADER] = s.store;
  const res = await fetch('/auth-api/refresh', { method: 'POST', headers, body: JSON.stringify({ refreshToken: s.login.refreshToken }) });
  if (!res.ok) {
    setSession(undefined);
    return false;
  }
  updateLogin(await res.json());
  return true;
}

const bearer = () => `Bearer ${session()?.login.accessToken}`;

async function fetchWithRefresh(request: Request): Promise<Response> {
  const retry = request.clone();
  const sent = request.headers.get('authorization');
  const res = await fetch(request);
  if (res.status !== 401 || !session()?.login.refreshToken || request.url.endsWith('/auth-api/refresh')) return res;
  if (sent === bearer()) {
    refreshing ??= refresh().finally(() => (refreshing = undefined));
    if (!(await refreshing)) return res;
  }
  retry.headers.set('authorization', bearer());
  return fetch(retry);
}

export const api = createClient<paths>({ baseUrl: '', fetch: fetchWithRefresh });
api.use(credentials);

// The header of a call about the administrator itself (its sessions, its factors): its own
// store, whichever store it looks at ('' sends none: root).
export function own(): Record<string, string> {
  return { [STORE_HEADER]: session()?.store ?? '' };
}

// An error answer of the API as its human sentence: the body's `detail` when it has one (the
// sentence the service wrote for people), else a sentence for its `errCode`; never raw JSON.
export interface ErrorAnswer {
  errCode?: string;
  detail?: string;
  message?: string;
  status?: number | string;
}

const SENTENCES: Record<string, string> = {
  Unauthorized: 'Your sign-in has ended. Sign in again.',
  Forbidden: 'You are not allowed to do this.',
  InvalidCredentials: 'Wrong username or password.',
  TenantMismatch: 'Your sign-in is not valid for this store.',
  StoreNotFound: 'There is no such store.',
  UserNotFound: 'There is no such user in this store.',
  TooManyRequests: 'Too many attempts: wait a little and try again.',
  TotpCodeInvalid: 'That code is not right, or was already used.',
  ServiceUnavailable: 'The service is unavailable for a moment. Try again.',
  InternalError: 'Something went wrong on the server.',
  RouteNotFound: 'The service does not offer this yet.',
  MfaEnrollmentRequired: 'Your role requires a second factor: set one up first.',
};

// The service writes details as lower-case clauses: shown as sentences.
const asSentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');

export function sentenceOf(error: unknown, status?: number): string {
  if (error && typeof error === 'object') {
    const e = error as ErrorAnswer;
    if (e.detail) return asSentence(e.detail);
    if (e.errCode && SENTENCES[e.errCode]) return SENTENCES[e.errCode];
    if (e.errCode) return e.errCode.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase()) + '.';
    if (e.message === 'No login found') return SENTENCES.Unauthorized;
  }
  if (error instanceof Error) return error.message;
  return status ? `The service answered ${status}.` : 'The service could not be reached.';
}

// A refused call: its sentence (screens show `message`) and the answer's errCode.
export class ApiError extends Error {
  constructor(
    message: string,
    readonly errCode?: string,
  ) {
    super(message);
  }
}

// Features the settings switch off: their routes answer 404 with these codes. The console shows
// them as off, naming the settings key, and offers none of their actions.
export interface FeatureOff {
  what: string;
  key: string;
}
const FEATURES_OFF: Record<string, FeatureOff> = {
  UserGroupsInactive: { what: 'User groups are', key: 'userGroupsActive' },
  WebAuthnNotConfigured: { what: 'Passkeys are', key: 'webauthn' },
  SubscriptionNotFound: { what: 'This event subscription is', key: 'eventSubscriptions' },
  WebhooksDisabled: { what: 'Webhooks are', key: 'webhooks.enabled' },
};

export function featureOff(error: unknown): FeatureOff | undefined {
  const code = error instanceof ApiError ? error.errCode : (error as ErrorAnswer | undefined)?.errCode;
  return code ? FEATURES_OFF[code] : undefined;
}

// The data of a call, or a thrown ApiError carrying the sentence.
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new ApiError('The service could not be reached.');
  }
  if (result.error !== undefined || !result.response.ok) {
    if (result.response.status === 401 && session()) setSession(undefined);
    throw new ApiError(sentenceOf(result.error, result.response.status), (result.error as ErrorAnswer | undefined)?.errCode);
  }
  return result.data as T;
}

// Ends the session at the service (so its token dies everywhere), then forgets it here.
export async function signOut(): Promise<void> {
  const refreshToken = session()?.login.refreshToken;
  try {
    await api.POST('/auth-api/logout', { body: refreshToken ? { refreshToken } : {} });
  } catch {
    // signed out here regardless
  }
  setSession(undefined);
}
