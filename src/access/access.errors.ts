import type { ErrCode } from '../kernel/errors.js';

// Codes of permissions, grants and user groups; their status and message live in the one
// catalogue (src/kernel/errors.ts).
export const ACCESS_ERR_CODES = [
  'PermissionDenied',
  'PermissionUnknown',
  'PermissionNotHeld',
  'PermissionGrantNotFound',
  'GrantTargetNotManaged',
  'UserGroupsInactive',
  'UserGroupNotFound',
  'UserGroupMemberNotFound',
  'UserGroupMemberExists',
  'GlobalGroupSaasOnly',
] as const satisfies readonly ErrCode[];
