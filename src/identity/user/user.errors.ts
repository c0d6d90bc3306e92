import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// A user's identifiers and password, whichever route sets them.
export const USER_ERRORS = defineErrors('src/identity/user/user.errors.ts', {
  DuplicateIdentifier: { status: HttpStatus.CONFLICT, message: 'errMsg_DuplicateIdentifier', description: 'the email or mobile is taken in this store' },
  IdentifierRequired: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_IdentifierRequired', description: 'an identifier the settings require is missing' },
  IdentifierNotAccepted: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_IdentifierNotAccepted', description: 'an identifier the settings do not store was sent' },
  InvalidMobile: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_InvalidMobile', description: 'not a mobile number' },
  WeakPassword: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_WeakPassword', description: 'the password is shorter than `passwordPolicy.minLength` (8 by default) or longer than 72 bytes' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof USER_ERRORS> {}
}
