import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { AppError } from './errors.js';

// The first problem, named by its full path (`store.name must be a string`).
function firstProblem(errors: ValidationError[], prefix = ''): { path: string; constraint: string; message: string } | undefined {
  for (const e of errors) {
    const path = prefix + e.property;
    // A wrong type says more than a length or format complaint about the same field.
    const entries = Object.entries(e.constraints ?? {});
    const [constraint, message] = entries.find(([name]) => name === 'whitelistValidation') ?? entries.find(([name]) => /^is[A-Z]/.test(name)) ?? entries[0] ?? [];
    if (constraint && message) return { path, constraint, message: prefix ? `${prefix}${message}` : message };
    const nested = firstProblem(e.children ?? [], path + '.');
    if (nested) return nested;
  }
  return undefined;
}

export function validationError(errors: ValidationError[]): AppError {
  const problem = firstProblem(errors);
  if (!problem) return new AppError('ValidationFailed');
  if (problem.constraint === 'whitelistValidation') return new AppError('UnknownField', `property ${problem.path} is not accepted`);
  return new AppError('ValidationFailed', problem.message);
}

// Strict validation (unknown fields refused, never assigned). Parameters consumed before the
// handler (`_store` by TenancyMiddleware, an API key sent in the body or query by the guard)
// are not DTO fields anywhere, so they are set aside here.
export class StrictValidationPipe extends ValidationPipe {
  private readonly consumed: ReadonlySet<string>;

  constructor(consumed: string[] = []) {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: validationError,
    });
    this.consumed = new Set(['_store', ...consumed]);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if ((metadata.type === 'body' || metadata.type === 'query') && value && typeof value === 'object') {
      value = Object.fromEntries(Object.entries(value).filter(([key]) => !this.consumed.has(key)));
    }
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object && value === undefined) {
      value = {};
    }
    return super.transform(value, metadata);
  }
}
