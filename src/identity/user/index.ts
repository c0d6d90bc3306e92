// The user feature's public shapes, for other features (its module and service are imported
// from their own files).
export { SYSTEM_USER_FIELDS, trim, UserProfileInput, UserResponse } from './user.dto.js';
export type { UserEntity } from './user.entity.js';
