import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Store-owner registration and the routes of one level only (SaaS or store).
export const REGISTRATION_ERRORS = defineErrors('src/identity/registration/registration.errors.ts', {
  RootLevelOnly: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RootLevelOnly', description: 'the route works only at the SaaS level (`root`)' },
  StoreLevelOnly: { status: HttpStatus.FORBIDDEN, message: 'errMsg_StoreLevelOnly', description: 'the route works only in a store' },
  TenantRegisterNotPublic: { status: HttpStatus.FORBIDDEN, message: 'errMsg_TenantRegisterNotPublic', description: 'store-owner registration is closed (`tenantRegisterIsPublic`)' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof REGISTRATION_ERRORS> {}
}
