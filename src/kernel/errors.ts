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
  // single-tenant deployments (settings.tenancy): one organisation, no stores to register or target
  StoreRegistrationUnavailable: { status: HttpStatus.NOT_FOUND, message: 'errMsg_StoreRegistrationUnavailable' },
  StoreTargetingUnavailable: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_StoreTargetingUnavailable' },
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
  ApiKeyPermissionNotHeld: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_ApiKeyPermissionNotHeld' },
  // user management
  UserNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserNotFound' },
  RoleNotAssignable: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RoleNotAssignable' },
  WrongCurrentPassword: { status: HttpStatus.FORBIDDEN, message: 'errMsg_WrongCurrentPassword' },
  // anti-bot challenge
  ChallengeFailed: { status: HttpStatus.FORBIDDEN, message: 'errMsg_ChallengeFailed' },
  // social login and single sign-on (social.errors.ts)
  SocialProviderNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SocialProviderNotFound' },
  SocialRedirectNotAllowed: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_SocialRedirectNotAllowed' },
  SocialCodeInvalid: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_SocialCodeInvalid' },
  SsoNotConfigured: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SsoNotConfigured' },
  SsoProviderUnavailable: { status: HttpStatus.BAD_GATEWAY, message: 'errMsg_SsoProviderUnavailable' },
  // remote sessions (src/identity/remote-session/remote-session.errors.ts)
  RemoteSessionEnded: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_RemoteSessionEnded' },
  RemoteSessionUnavailable: { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'errMsg_RemoteSessionUnavailable' },

  // verification flows and the second-factor gate (src/identity/verification/verification.errors.ts)
  EmailTwoFactorNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_EmailTwoFactorNeeded' },
  MobileTwoFactorNeeded: { status: HttpStatus.FORBIDDEN, message: 'errMsg_MobileTwoFactorNeeded' },
  VerificationFlowDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_VerificationFlowDisabled' },
  VerificationResendTooSoon: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_VerificationResendTooSoon' },
  VerificationCodeInvalid: { status: HttpStatus.FORBIDDEN, message: 'errMsg_VerificationCodeInvalid' },
  VerificationCodeExpired: { status: HttpStatus.FORBIDDEN, message: 'errMsg_VerificationCodeExpired' },
  VerificationAttemptsExceeded: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_VerificationAttemptsExceeded' },
  SecondFactorNotPending: { status: HttpStatus.CONFLICT, message: 'errMsg_SecondFactorNotPending' },
  // avatar bucket
  FileRequired: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_FileRequired' },
  FileNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_FileNotFound' },
  // event channel
  SubscriptionNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SubscriptionNotFound' },
  SessionChanged: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_SessionChanged' },
  EventReaderTooSlow: { status: HttpStatus.TOO_MANY_REQUESTS, message: 'errMsg_EventReaderTooSlow' },
  // outbound realtime channel (src/messaging/realtime/realtime.errors.ts)
  RealtimeChannelDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_RealtimeChannelDisabled' },
  RealtimeInvalidChannel: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidChannel' },
  RealtimeInvalidEvent: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidEvent' },
  RealtimeTooManyChannels: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeTooManyChannels' },
  RealtimeTooManyEvents: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeTooManyEvents' },
  RealtimeNotPresenceChannel: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeNotPresenceChannel' },
  RealtimeInvalidInfo: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidInfo' },
  RealtimeInvalidSocketId: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidSocketId' },
  RealtimeInvalidParameter: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidParameter' },
  RealtimeEncryptionDisabled: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeEncryptionDisabled' },
  RealtimeChannelForbidden: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RealtimeChannelForbidden' },
  RealtimeWebhookInvalid: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_RealtimeWebhookInvalid' },
  RealtimeProviderError: { status: HttpStatus.BAD_GATEWAY, message: 'errMsg_RealtimeProviderError' },
  // permissions, grants and user groups (src/access/access.errors.ts)
  PermissionDenied: { status: HttpStatus.FORBIDDEN, message: 'errMsg_PermissionDenied' },
  PermissionUnknown: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_PermissionUnknown' },
  PermissionNotHeld: { status: HttpStatus.FORBIDDEN, message: 'errMsg_PermissionNotHeld' },
  PermissionGrantNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_PermissionGrantNotFound' },
  GrantTargetNotManaged: { status: HttpStatus.FORBIDDEN, message: 'errMsg_GrantTargetNotManaged' },
  UserGroupsInactive: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserGroupsInactive' },
  UserGroupNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserGroupNotFound' },
  UserGroupMemberNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_UserGroupMemberNotFound' },
  UserGroupMemberExists: { status: HttpStatus.CONFLICT, message: 'errMsg_UserGroupMemberExists' },
  GlobalGroupSaasOnly: { status: HttpStatus.FORBIDDEN, message: 'errMsg_GlobalGroupSaasOnly' },
} as const satisfies Record<string, { status: HttpStatus; message: string; shape?: 'status' }>;

export type ErrCode = keyof typeof ERROR_CATALOGUE;

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
    // Extra body fields the client can act on (e.g. `providerStatus` of a failed upstream call).
    readonly fields: Record<string, string | number | boolean> = {},
  ) {
    super(detail ?? messageCode ?? ERROR_CATALOGUE[errCode].message);
    this.name = 'AppError';
    this.status = ERROR_CATALOGUE[errCode].status;
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
  const entry: { status: number; message: string; shape?: 'status' } = ERROR_CATALOGUE[error.errCode];
  if (entry.shape === 'status') return { status: 'ERR', message: entry.message };
  return { ...error.fields, result: 'ERR', status: error.status, message: error.messageCode ?? entry.message, errCode: error.errCode, ...(error.detail !== undefined && { detail: error.detail }), requestId };
}
