// The token feature's public shapes, for other features (its module and services are imported
// from their own files).
export { SecondFactorDoneResponse } from './token.dto.js';
export type { LoginTokens } from './token.types.js';
