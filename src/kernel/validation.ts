import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { getMetadataStorage, isURL, ValidateBy, ValidateIf } from 'class-validator';
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

type RulesLookup = ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas'];
const REMEMBERING = Symbol('remembering validation rules');

// class-validator finds a class's rules, on every validation, by testing the class against every
// decorated class of the application (typestack/class-validator#2686): one `instanceof` per DTO
// of the service, per request. A class's rules are all declared when it loads, so the answer is
// kept per class and options, and forgotten whenever rules are added (a class loaded later).
export function rememberValidationRules(storage = getMetadataStorage()): void {
  const marked = storage as typeof storage & { [REMEMBERING]?: true };
  if (marked[REMEMBERING]) return;
  marked[REMEMBERING] = true;
  const lookup: RulesLookup = storage.getTargetValidationMetadatas.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  let known = new WeakMap<object, Map<string, ReturnType<RulesLookup>>>();
  storage.addValidationMetadata = (metadata) => {
    known = new WeakMap();
    add(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (typeof target !== 'function') return lookup(target, schema, always, strictGroups, groups);
    const key = JSON.stringify([schema, always, strictGroups, groups]);
    let byOptions = known.get(target);
    if (!byOptions) known.set(target, (byOptions = new Map()));
    let rules = byOptions.get(key);
    if (!rules) byOptions.set(key, (rules = lookup(target, schema, always, strictGroups, groups)));
    return rules;
  };
}

// Strict validation (unknown fields refused, never assigned). Parameters consumed before the
// handler (`_store` by TenancyMiddleware, an API key sent in the body or query by the guard)
// are not DTO fields anywhere, so they are set aside here.
export class StrictValidationPipe extends ValidationPipe {
  private readonly consumed: ReadonlySet<string>;

  constructor(consumed: string[] = []) {
    rememberValidationRules();
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

const URL_OPTIONS = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };
// The service's own image links, as it hands them out without PUBLIC_URL: generated avatars and
// bucket downloads. A client may send back what it was given.
const OWN_IMAGE_LINK = /^\/auth-api\/(avatars\/[a-f0-9]{32}\.svg|bucket\/userAvatars\/download\/key\/[a-f0-9]{40})$/;

// An image address: an absolute http(s) URL, or one of the service's own relative links.
export function IsImageUrl(): PropertyDecorator {
  return ValidateBy({
    name: 'isImageUrl',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && (isURL(value, URL_OPTIONS) || OWN_IMAGE_LINK.test(value)),
      defaultMessage: (args) => `${args?.property} must be an http(s) URL`,
    },
  });
}

// A BCP 47 language tag (`en`, `pt-BR`, `zh-Hant-TW`), stored in its canonical form; null clears
// the preference. Intl knows the grammar, so `english` or `en_US` are refused.
export function IsLanguageTag(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? (canonicalLanguage(value) ?? value) : value)),
    ValidateIf((_o, value) => value !== null),
    ValidateBy({
      name: 'isLanguageTag',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.length <= 35 && canonicalLanguage(value) === value,
        defaultMessage: (args) => `${args?.property} must be a BCP 47 language tag (e.g. en, pt-BR) or null`,
      },
    }),
  );
}

function canonicalLanguage(tag: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

// `@IsOptional()` lets null through unchecked as well as absence: a PATCH field sent as null
// would reach the service (and the database) as a value. This skips validation only when the
// field is absent, so null is checked like any other value and refused where it is not one.
export function IsOmittable(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
