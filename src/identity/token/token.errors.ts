import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Refresh tokens (settings accessTokenMinutes).
export const TOKEN_ERRORS = defineErrors('src/identity/token/token.errors.ts', {
  RefreshTokenInvalid: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_RefreshTokenInvalid', description: 'unknown, expired, revoked or other-store refresh token, or refresh tokens are off' },
  RefreshTokenReused: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_RefreshTokenReused', description: 'a spent refresh token was used again after its grace window: its session has ended' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof TOKEN_ERRORS> {}
}
