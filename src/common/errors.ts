import { HttpStatus } from '@nestjs/common';

// One catalogue: every errCode maps once to its HTTP status and message code.
// Feature modules declare their codes in <feature>.errors.ts and add them here.
export const ERROR_CATALOGUE = {
  // request shape
  MalformedJson: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_MalformedJson' },
  ValidationFailed: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_ValidationFailed' },
  UnknownField: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_UnknownField' },
  ForbiddenField: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_ForbiddenField' },
  PayloadTooLarge: { status: HttpStatus.PAYLOAD_TOO_LARGE, message: 'errMsg_PayloadTooLarge' },
  UnsupportedMediaType: { status: HttpStatus.UNSUPPORTED_MEDIA_TYPE, message: 'errMsg_UnsupportedMediaType' },
  RouteNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_RouteNotFound' },
  Conflict: { status: HttpStatus.CONFLICT, message: 'errMsg_Conflict' },
  NotAcceptable: { status: HttpStatus.NOT_ACCEPTABLE, message: 'errMsg_NotAcceptable' },
  UnprocessableEntity: { status: HttpStatus.UNPROCESSABLE_ENTITY, message: 'errMsg_UnprocessableEntity' },
  MethodNotAllowed: { status: HttpStatus.METHOD_NOT_ALLOWED, message: 'errMsg_MethodNotAllowed' },
  TooManyRequests: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_TooManyRequests' },
  Forbidden: { status: HttpStatus.FORBIDDEN, message: 'errMsg_Forbidden' },
  Unauthorized: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_Unauthorized' },
  NotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_NotFound' },
  InternalError: { status: HttpStatus.INTERNAL_SERVER_ERROR, message: 'errMsg_InternalError' },
  ServiceUnavailable: { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'errMsg_ServiceUnavailable' },
  // tenancy and stores
  StoreNotFound: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_StoreNotFound' },
  StoreInactive: { status: HttpStatus.FORBIDDEN, message: 'errMsg_StoreInactive' },
  RootLevelOnly: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RootLevelOnly' },
  StoreLevelOnly: { status: HttpStatus.FORBIDDEN, message: 'errMsg_StoreLevelOnly' },
  TenantRegisterNotPublic: { status: HttpStatus.FORBIDDEN, message: 'errMsg_TenantRegisterNotPublic' },
  // users and identifiers
  DuplicateIdentifier: { status: HttpStatus.CONFLICT, message: 'errMsg_DuplicateIdentifier' },
  IdentifierRequired: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_IdentifierRequired' },
  IdentifierNotAccepted: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_IdentifierNotAccepted' },
  InvalidMobile: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_InvalidMobile' },
  WeakPassword: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_WeakPassword' },
  // login, tokens, sessions
  MissingParameters: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_MissingParameters' },
  InvalidCredentials: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_InvalidCredentials' },
  NoLoginFound: { status: HttpStatus.UNAUTHORIZED, message: 'No login found', shape: 'status' },
  UserInactive: { status: HttpStatus.FORBIDDEN, message: 'errMsg_UserInactive' },
  EmailVerificationNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_EmailNotVerified' },
  MobileVerificationNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_MobileNotVerified' },
  TenantMismatch: { status: HttpStatus.FORBIDDEN, message: 'errMsg_TenantMismatch' },
  PrincipalNotAccepted: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_PrincipalNotAccepted' },
  MachineClientNotAllowed: { status: HttpStatus.FORBIDDEN, message: 'errMsg_MachineClientNotAllowed' },
  SessionNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SessionNotFound' },
  KeyNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_KeyNotFound' },
  // user management
  UserNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserNotFound' },
  RoleNotAssignable: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RoleNotAssignable' },
  WrongCurrentPassword: { status: HttpStatus.FORBIDDEN, message: 'errMsg_WrongCurrentPassword' },
  // avatar bucket
  FileRequired: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_FileRequired' },
  FileNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_FileNotFound' },
} as const satisfies Record<string, { status: HttpStatus; message: string; shape?: 'status' }>;

export type ErrCode = keyof typeof ERROR_CATALOGUE;

// A failure the client can act on. `detail` replaces the catalogue message when it names a field.
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly errCode: ErrCode,
    readonly detail?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? ERROR_CATALOGUE[errCode].message);
    this.name = 'AppError';
    this.status = ERROR_CATALOGUE[errCode].status;
  }
}

export interface ErrorBody {
  result: 'ERR';
  status: number;
  message: string;
  errCode: ErrCode;
  requestId?: string;
}

// The spec's two shapes: `{ result, status, message, errCode }`, and `{ status: 'ERR', message }`
// for `/currentuser` without a login.
export function errorBody(error: AppError, requestId?: string): ErrorBody | { status: 'ERR'; message: string } {
  const entry: { status: number; shape?: 'status' } = ERROR_CATALOGUE[error.errCode];
  if (entry.shape === 'status') return { status: 'ERR', message: error.message };
  return { result: 'ERR', status: error.status, message: error.message, errCode: error.errCode, requestId };
}
