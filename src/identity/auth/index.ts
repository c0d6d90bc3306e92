// The auth feature's public shapes, for other features (its module and services are imported
// from their own files): a login's answer, which other ways of signing in (passkeys) also give.
export { LoginResponse } from './auth.dto.js';
