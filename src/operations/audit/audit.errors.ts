import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Reading the audit log.
export const AUDIT_ERRORS = defineErrors('src/operations/audit/audit.errors.ts', {
  AuditCursorInvalid: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_AuditCursorInvalid', description: 'an `after` cursor that no audit log page gave' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof AUDIT_ERRORS> {}
}
