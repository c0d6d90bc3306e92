import { AppError } from '../../kernel/errors.js';

// The catalogue entries live in src/kernel/errors.ts.

// The remote service does not know the session (ended, expired, never existed), or its user
// has no active account in the targeted store.
export const remoteSessionEnded = (detail: string) => new AppError('RemoteSessionEnded', detail);

// The remote service (its keys or its session endpoint) did not answer usably: a 503 the client
// may retry, never a 500 and never a login refusal.
export const remoteSessionUnavailable = (detail: string, providerStatus?: number) =>
  new AppError('RemoteSessionUnavailable', detail, { 'Retry-After': '5' }, undefined, providerStatus === undefined ? {} : { providerStatus });
