import { isServiceError } from '@svc/client';
import { session, signOut, STORE_HEADER } from './session';

// The calls go through @svc/client (session.ts): `api` is its openapi-fetch client of the
// looked-at store, whose calls carry the token (refreshed ahead of expiry and on a 401, once for
// concurrent calls) and the store header.
export { api, signOut, STORE_HEADER } from './session';

// The header of a call about the administrator itself (its sessions, its factors): its own
// store, whichever store it looks at ('' names none: root).
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
  NetworkError: 'The service could not be reached.',
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
  OidcProviderDisabled: { what: 'The OpenID Connect provider is', key: 'oidcProvider.enabled' },
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
    if (result.response.status === 401 && session()) void signOut();
    throw new ApiError(sentenceOf(result.error, result.response.status), (result.error as ErrorAnswer | undefined)?.errCode);
  }
  return result.data as T;
}

// A refusal of one of @svc/client's steps: a 401 ends the session here, as must() does.
export function refused(error: unknown): void {
  if (isServiceError(error) && error.status === 401 && session()) void signOut();
}

// An error of @svc/client (a building block of @svc/react shows it) as its sentence.
export const formatError = (error: Error): string => sentenceOf(error);

// The answer of one of @svc/client's own steps (sign-in, a second factor, a passkey), or a thrown
// ApiError carrying the sentence, as must() gives for a call.
export async function attempt<T>(step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (error) {
    if (!isServiceError(error)) throw error instanceof Error ? new ApiError(error.message) : error;
    refused(error);
    throw new ApiError(sentenceOf(error, error.status), error.errCode);
  }
}
