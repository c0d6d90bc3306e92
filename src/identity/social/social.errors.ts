import { HttpStatus } from '@nestjs/common';
import { AppError, defineErrors, type CodesOf } from '../../kernel/errors.js';

// Social login.
export const SOCIAL_ERRORS = defineErrors('src/identity/social/social.errors.ts', {
  SocialProviderNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SocialProviderNotFound', description: 'social login with a provider that is not enabled' },
  SocialRedirectNotAllowed: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_SocialRedirectNotAllowed', description: 'a `redirectUrl` other than the configured addresses (settings `socialLogin.redirectUrl`, `socialLogin.redirectUrls`), exactly' },
  SocialCodeInvalid: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_SocialCodeInvalid', description: 'a `socialCode` that is unknown, expired, already used or of another store' },
  SocialProviderUnavailable: {
    status: HttpStatus.BAD_GATEWAY,
    message: 'errMsg_SocialProviderUnavailable',
    description: '`GET /auth-api/auth/{provider}` when the provider cannot be used: a generic provider\'s discovery document unreachable, failing, or naming another issuer; the cause is logged at warn',
  },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof SOCIAL_ERRORS> {}
}

export const socialCodeInvalid = () => new AppError('SocialCodeInvalid', 'the socialCode is unknown, expired or already used');
export const providerNotFound = (provider: string) => new AppError('SocialProviderNotFound', `social login with "${provider}" is not enabled`);
// The provider's fault or its settings', never the client's; the cause goes to the log.
export const socialProviderUnavailable = (provider: string) => new AppError('SocialProviderUnavailable', `the sign-in provider "${provider}" cannot be reached or is not usable`);
export const redirectNotAllowed = () => new AppError('SocialRedirectNotAllowed', 'redirectUrl must be exactly one of the configured addresses');

// A provider's refusal a client can act on (the person declined, sign in at the provider first,
// try later...): passed on to the client as it is. RFC 6749 §4.1.2.1, OpenID Connect Core
// §3.1.2.6.
export const PROVIDER_ERROR_CODES = [
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
] as const;

export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

// The `error` query parameter of the client's callback: a provider's standard code, or ours for
// what failed on this side or has no standard name. A stable word, never provider text.
export type SocialFailure =
  | ProviderErrorCode
  // The `state` is unknown, expired or used: the flow was not started here, or is replayed.
  | 'state_mismatch'
  // Single sign-on and generic providers: the provider's discovery document cannot be read or
  // names another issuer.
  | 'provider_unavailable'
  // Single sign-on and generic providers: the provider refused the code, or its tokens did not verify.
  | 'token_exchange_failed'
  // Single sign-on and generic providers: the provider's userinfo answer failed.
  | 'userinfo_failed'
  // Single sign-on and generic providers: neither the ID token nor userinfo names the subject.
  | 'subject_missing'
  // Any other failure of the provider: a code outside the standards, or a social login's exchange.
  | 'provider_error'
  // Social login: the provider came back with nothing to sign in with.
  | 'login_failed';

// A provider's `error` parameter as the client hears it: a standard code as it is (Apple's word
// for a cancel as `access_denied`), anything else as `provider_error`. Its free-text
// `error_description` never reaches the client: the operator reads it in the log.
export function providerErrorCode(error: unknown): ProviderErrorCode | 'provider_error' {
  if (error === 'user_cancelled_authorize') return 'access_denied';
  return (PROVIDER_ERROR_CODES as readonly unknown[]).includes(error) ? (error as ProviderErrorCode) : 'provider_error';
}
