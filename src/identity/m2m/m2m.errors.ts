import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Machine tokens of the services this one trusts.
export const M2M_ERRORS = defineErrors('src/identity/m2m/m2m.errors.ts', {
  MachineClientNotAllowed: { status: HttpStatus.FORBIDDEN, message: 'errMsg_MachineClientNotAllowed', description: 'the calling service is blocked or not allowed' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof M2M_ERRORS> {}
}
