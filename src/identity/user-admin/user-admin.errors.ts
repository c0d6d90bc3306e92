import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Managing users: who may change whom, and with which roles.
export const USER_ADMIN_ERRORS = defineErrors('src/identity/user-admin/user-admin.errors.ts', {
  UserNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserNotFound', description: 'no such user in this store' },
  RoleNotAssignable: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RoleNotAssignable', description: 'a role or flag the caller may not give' },
  WrongCurrentPassword: { status: HttpStatus.FORBIDDEN, message: 'errMsg_WrongCurrentPassword', description: 'changing your password without the right `currentPassword`' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof USER_ADMIN_ERRORS> {}
}
