import type { ErrCode } from '../common/errors.js';

// A missing, wrong, expired or reused challenge solution (403).
export const CHALLENGE_FAILED: ErrCode = 'ChallengeFailed';
