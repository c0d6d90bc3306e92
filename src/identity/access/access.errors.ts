import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Permissions, grants and user groups.
export const ACCESS_ERRORS = defineErrors('src/identity/access/access.errors.ts', {
  PermissionDenied: { status: HttpStatus.FORBIDDEN, message: 'errMsg_PermissionDenied', description: 'the caller does not hold the permission the route or object needs' },
  PermissionUnknown: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_PermissionUnknown', description: 'a permission not listed in `permissionGroups`' },
  PermissionNotHeld: { status: HttpStatus.FORBIDDEN, message: 'errMsg_PermissionNotHeld', description: 'granting or denying a permission the caller does not hold' },
  PermissionGrantNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_PermissionGrantNotFound', description: 'no such grant in this store (or at root)' },
  GrantTargetNotManaged: { status: HttpStatus.FORBIDDEN, message: 'errMsg_GrantTargetNotManaged', description: 'a grant for a role not below the caller\'s, a user it may not manage (or itself), or the whole store (its owner only)' },
  UserGroupsInactive: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserGroupsInactive', description: 'a group route while `userGroupsActive` is false' },
  UserGroupNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserGroupNotFound', description: 'no such group of this store, nor a global one' },
  UserGroupMemberNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserGroupMemberNotFound', description: 'no such membership of this store\'s users' },
  UserGroupMemberExists: { status: HttpStatus.CONFLICT, message: 'errMsg_UserGroupMemberExists', description: 'the user is already in the group' },
  GlobalGroupSaasOnly: { status: HttpStatus.FORBIDDEN, message: 'errMsg_GlobalGroupSaasOnly', description: 'creating, changing or deleting a global group without being a SaaS admin' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof ACCESS_ERRORS> {}
}
