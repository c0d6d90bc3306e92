import { HttpStatus } from '@nestjs/common';
import { AppError, defineErrors, type CodesOf } from '../../kernel/errors.js';

// Sessions held by a remote service.
export const REMOTE_SESSION_ERRORS = defineErrors('src/identity/remote-session/remote-session.errors.ts', {
  RemoteSessionEnded: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_RemoteSessionEnded', description: 'a remote service\'s token whose session it no longer holds, or whose user has no active account in the store' },
  RemoteSessionUnavailable: { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'errMsg_RemoteSessionUnavailable', description: 'the remote service (session endpoint or keys) failed or did not answer in time; `providerStatus` when it answered' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof REMOTE_SESSION_ERRORS> {}
}

// The remote service does not know the session (ended, expired, never existed), or its user
// has no active account in the targeted store.
export const remoteSessionEnded = (detail: string) => new AppError('RemoteSessionEnded', detail);

// The remote service (its keys or its session endpoint) did not answer usably: a 503 the client
// may retry, never a 500 and never a login refusal.
export const remoteSessionUnavailable = (detail: string, providerStatus?: number) =>
  new AppError('RemoteSessionUnavailable', detail, { 'Retry-After': '5' }, undefined, providerStatus === undefined ? {} : { providerStatus });
