// The session feature's public shapes, for other features (its module and service are imported
// from their own files).
export { SessionListItem, SessionsEndedResponse, SessionResponse, toSessionListItem, toSessionResponse, type SessionView } from './session.dto.js';
export type { SessionEntity } from './session.entity.js';
