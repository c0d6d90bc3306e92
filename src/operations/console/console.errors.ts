import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Serving the admin console (docs/console.md).
export const CONSOLE_ERRORS = defineErrors('src/operations/console/console.errors.ts', {
  ConsoleNotBuilt: { status: HttpStatus.NOT_FOUND, message: 'errMsg_ConsoleNotBuilt', description: 'the console is enabled but dist/console was not built (`npm run build`)' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof CONSOLE_ERRORS> {}
}
