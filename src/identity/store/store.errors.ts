import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Changing a store: what only the SaaS level may do to it.
export const STORE_ERRORS = defineErrors('src/identity/store/store.errors.ts', {
  StoreActivationSaasOnly: {
    status: HttpStatus.FORBIDDEN,
    message: 'errMsg_StoreActivationSaasOnly',
    description: "a store's `isActive` is changed only by a `superAdmin` or `saasAdmin` of the root store",
  },
  RootStoreAlwaysActive: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RootStoreAlwaysActive', description: 'the root store (the SaaS level) cannot be deactivated' },
  StoreListSaasOnly: { status: HttpStatus.FORBIDDEN, message: 'errMsg_StoreListSaasOnly', description: 'the list of every store is for the SaaS level: a login or key of the root store' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof STORE_ERRORS> {}
}
