import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Login, the credentials a route takes, and the signing keys.
export const AUTH_ERRORS = defineErrors('src/identity/auth/auth.errors.ts', {
  MissingParameters: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_MissingParameters', description: 'login without username or password' },
  InvalidCredentials: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_InvalidCredentials', description: 'wrong username or password' },
  NoLoginFound: { status: HttpStatus.UNAUTHORIZED, message: 'No login found', shape: 'status', description: '`GET /currentuser` without a valid session: `{ status: \'ERR\', message }` only' },
  UserInactive: { status: HttpStatus.FORBIDDEN, message: 'errMsg_UserInactive', description: 'the account is deactivated' },
  PrincipalNotAccepted: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_PrincipalNotAccepted', description: 'the route does not take this kind of credential' },
  KeyNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_KeyNotFound', description: 'no valid signing key with this id' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof AUTH_ERRORS> {}
}
