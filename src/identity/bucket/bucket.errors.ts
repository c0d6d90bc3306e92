import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// The avatar bucket.
export const BUCKET_ERRORS = defineErrors('src/identity/bucket/bucket.errors.ts', {
  FileRequired: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_FileRequired', description: 'an upload without the `file` field' },
  FileNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_FileNotFound', description: 'no such avatar' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof BUCKET_ERRORS> {}
}
