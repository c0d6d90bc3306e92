import type { ErrCode } from '../../kernel/errors.js';

// A missing, wrong, expired or reused challenge solution (403).
export const CHALLENGE_FAILED: ErrCode = 'ChallengeFailed';
