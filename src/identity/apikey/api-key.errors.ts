import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// API keys: a key acts with at most its creator's permissions.
export const API_KEY_ERRORS = defineErrors('src/identity/apikey/api-key.errors.ts', {
  ApiKeyPermissionNotHeld: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_ApiKeyPermissionNotHeld', description: 'an API key asked for with a permission its creator does not hold' },
  ApiKeyOutsideOwnStore: {
    status: HttpStatus.FORBIDDEN,
    message: 'errMsg_ApiKeyOutsideOwnStore',
    description: 'an API key asked for in another store than the caller\'s own (a super administrator targeting a store): a key acts for its creator, a user of its store',
  },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof API_KEY_ERRORS> {}
}
