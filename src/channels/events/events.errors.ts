import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// The event channel (SSE streams, Socket.IO namespaces).
export const EVENTS_ERRORS = defineErrors('src/channels/events/events.errors.ts', {
  SubscriptionNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SubscriptionNotFound', description: 'no event subscription of that name (SSE stream, Socket.IO namespace)' },
  SessionChanged: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_SessionChanged', description: 'event channel only: the stream\'s login changed (roles, another session); connect again' },
  EventReaderTooSlow: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_EventReaderTooSlow', description: 'event channel only: the client left `clientBufferLimit` events unread; connect again' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof EVENTS_ERRORS> {}
}
