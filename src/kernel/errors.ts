import { HttpStatus } from '@nestjs/common';

// How errors are declared. Each feature declares its codes in its own `<feature>.errors.ts`:
//
//   export const STORE_ERRORS = defineErrors('src/identity/store/store.errors.ts', {
//     StoreGone: { status: HttpStatus.GONE, message: 'errMsg_StoreGone', description: 'the one line docs/errors.md shows' },
//   });
//   declare module '../../kernel/errors.js' {
//     interface DeclaredErrors extends CodesOf<typeof STORE_ERRORS> {}
//   }
//
// The `declare module` block adds the codes to ErrCode, so `new AppError('StoreGone')` type-checks
// anywhere (and a code declared twice with two meanings does not compile). The root
// (src/errors.ts) registers every feature's set at startup, so the kernel assembles the one
// catalogue without importing any feature; docs/errors.md is generated from it.
export interface ErrorDefinition {
  readonly status: HttpStatus;
  // The message code clients switch on (`errMsg_...`); the spec's text for the `status` shape.
  readonly message: string;
  // When the client gets it: the one line of docs/errors.md.
  readonly description: string;
  // The spec's `{ status: 'ERR', message }` body (`/currentuser` without a login).
  readonly shape?: 'status';
}

export interface ErrorSet<T extends Record<string, ErrorDefinition> = Record<string, ErrorDefinition>> {
  // The file that declares the codes, from the project root (`src/identity/store/store.errors.ts`).
  readonly file: string;
  readonly codes: T;
}

export function defineErrors<const T extends Record<string, ErrorDefinition>>(file: string, codes: T): ErrorSet<T> {
  return { file, codes };
}

export type CodesOf<S> = S extends ErrorSet<infer T> ? T : never;

// The codes of the request itself and of the mechanism (the exception filter, the body parser,
// validation, rate limits): no feature owns them.
export const KERNEL_ERRORS = defineErrors('src/kernel/errors.ts', {
  MalformedJson: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_MalformedJson', description: 'the body is not valid JSON' },
  ValidationFailed: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_ValidationFailed', description: 'a field has the wrong type or form (the detail names it)' },
  UnknownField: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_UnknownField', description: 'a field the route does not take, or one the system owns' },
  ForbiddenField: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_ForbiddenField', description: 'a prototype key (`__proto__`, `constructor`, `prototype`)' },
  PayloadTooLarge: { status: HttpStatus.PAYLOAD_TOO_LARGE, message: 'errMsg_PayloadTooLarge', description: 'a JSON body over 100 kB, an upload over `avatarMaxBytes`' },
  UnsupportedMediaType: { status: HttpStatus.UNSUPPORTED_MEDIA_TYPE, message: 'errMsg_UnsupportedMediaType', description: 'a body that is not JSON; an upload that is not an image' },
  RouteNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_RouteNotFound', description: 'no such route' },
  Conflict: { status: HttpStatus.CONFLICT, message: 'errMsg_Conflict', description: 'a conflicting change' },
  NotAcceptable: { status: HttpStatus.NOT_ACCEPTABLE, message: 'errMsg_NotAcceptable', description: 'the answer cannot be given in an accepted type' },
  UnprocessableEntity: { status: HttpStatus.UNPROCESSABLE_ENTITY, message: 'errMsg_UnprocessableEntity', description: 'a well-formed request that cannot be carried out' },
  MethodNotAllowed: { status: HttpStatus.METHOD_NOT_ALLOWED, message: 'errMsg_MethodNotAllowed', description: 'the path is a route\'s, not with this method; `Allow` lists the methods it takes (a path no route has is `404 RouteNotFound`)' },
  TooManyRequests: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_TooManyRequests', description: 'a rate limit; `Retry-After` says when to retry' },
  Forbidden: { status: HttpStatus.FORBIDDEN, message: 'errMsg_Forbidden', description: 'known caller, not allowed (role, or not a key or user it may manage)' },
  Unauthorized: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_Unauthorized', description: 'no, invalid or expired credentials' },
  NotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_NotFound', description: 'no such object in this store (e.g. an API key)' },
  InternalError: { status: HttpStatus.INTERNAL_SERVER_ERROR, message: 'errMsg_InternalError', description: 'a fault of the service; the body carries only the request id' },
  ServiceUnavailable: { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'errMsg_ServiceUnavailable', description: 'a dependency is down; retry later' },
});

// Every declared code: the kernel's, and those each `<feature>.errors.ts` adds (see above).
export interface DeclaredErrors extends CodesOf<typeof KERNEL_ERRORS> {}

export type ErrCode = keyof DeclaredErrors;

// The assembled catalogue, in registration order: the kernel's codes, then each set the root
// registers (src/errors.ts).
const catalogue = new Map<string, ErrorDefinition>();
const sets: ErrorSet[] = [];

export function registerErrors(...added: ErrorSet[]): void {
  for (const set of added) {
    if (sets.includes(set)) continue;
    for (const code of Object.keys(set.codes)) {
      const first = sets.find((known) => code in known.codes)?.file;
      if (first) throw new Error(`errCode ${code} is declared twice: in ${first} and in ${set.file}`);
    }
    sets.push(set);
    for (const [code, definition] of Object.entries(set.codes)) catalogue.set(code, definition);
  }
}

registerErrors(KERNEL_ERRORS);

// The sets in registration order, each with its file: what docs/errors.md is generated from.
export function errorSets(): readonly ErrorSet[] {
  return sets;
}

export function errorCodes(): ErrCode[] {
  return [...catalogue.keys()] as ErrCode[];
}

export function errorDefinition(code: ErrCode): ErrorDefinition {
  const definition = catalogue.get(code);
  // Declared in a <feature>.errors.ts (it compiled) but the set is not registered in src/errors.ts.
  if (!definition) throw new Error(`errCode ${code} is not in the error catalogue: register its <feature>.errors.ts in src/errors.ts`);
  return definition;
}

// A failure the client can act on. The body's `message` is always the catalogue's message code,
// so clients can switch on it; `detail` is the human sentence (which field, what is wrong).
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly errCode: ErrCode,
    readonly detail?: string,
    readonly headers: Record<string, string> = {},
    // A message code more precise than the catalogue's, where the spec names one per route
    // (`errMsg_getUsersRequiresEmail2FA`); still a code, never a sentence.
    readonly messageCode?: `errMsg_${string}`,
    // Extra body fields the client can act on (e.g. `providerStatus` of a failed upstream call,
    // a refused password's `feedback`): plain JSON values.
    readonly fields: Record<string, unknown> = {},
  ) {
    const definition = errorDefinition(errCode);
    super(detail ?? messageCode ?? definition.message);
    this.name = 'AppError';
    this.status = definition.status;
  }
}

export interface ErrorBody {
  result: 'ERR';
  status: number;
  message: string;
  errCode: ErrCode;
  detail?: string;
  requestId?: string;
  [field: string]: unknown;
}

// The spec's two shapes: `{ result, status, message, errCode }`, and `{ status: 'ERR', message }`
// for `/currentuser` without a login.
export function errorBody(error: AppError, requestId?: string): ErrorBody | { status: 'ERR'; message: string } {
  const entry = errorDefinition(error.errCode);
  if (entry.shape === 'status') return { status: 'ERR', message: entry.message };
  return { ...error.fields, result: 'ERR', status: error.status, message: error.messageCode ?? entry.message, errCode: error.errCode, ...(error.detail !== undefined && { detail: error.detail }), requestId };
}
