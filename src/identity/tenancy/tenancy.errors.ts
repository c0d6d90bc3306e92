import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// The targeted store: missing, deactivated, another one than the credentials', or any store at all
// in a single-tenant deployment (settings.tenancy).
export const TENANCY_ERRORS = defineErrors('src/identity/tenancy/tenancy.errors.ts', {
  StoreNotFound: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_StoreNotFound', description: 'the targeted store does not exist' },
  StoreInactive: { status: HttpStatus.FORBIDDEN, message: 'errMsg_StoreInactive', description: 'the store is deactivated: no login, registration, session or key works in it' },
  StoreRegistrationUnavailable: { status: HttpStatus.NOT_FOUND, message: 'errMsg_StoreRegistrationUnavailable', description: 'single-tenant mode: there are no stores to register' },
  StoreTargetingUnavailable: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_StoreTargetingUnavailable', description: 'single-tenant mode: the request named a store other than `root`' },
  TenantMismatch: { status: HttpStatus.FORBIDDEN, message: 'errMsg_TenantMismatch', description: 'the token or key belongs to another store' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof TENANCY_ERRORS> {}
}
