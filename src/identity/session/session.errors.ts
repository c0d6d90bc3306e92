import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// A user's own sessions.
export const SESSION_ERRORS = defineErrors('src/identity/session/session.errors.ts', {
  SessionNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SessionNotFound', description: 'no such session of yours' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof SESSION_ERRORS> {}
}
