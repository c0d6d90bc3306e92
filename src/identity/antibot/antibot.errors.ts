import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf, type ErrCode } from '../../kernel/errors.js';

// The anti-bot challenge.
export const ANTIBOT_ERRORS = defineErrors('src/identity/antibot/antibot.errors.ts', {
  ChallengeFailed: { status: HttpStatus.FORBIDDEN, message: 'errMsg_ChallengeFailed', description: 'the anti-bot solution (`antiBot` settings) is missing, wrong, expired or already used' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof ANTIBOT_ERRORS> {}
}

export const CHALLENGE_FAILED: ErrCode = 'ChallengeFailed';
