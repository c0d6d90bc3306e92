import { HttpStatus } from '@nestjs/common';
import { AppError, defineErrors, type CodesOf } from '../../kernel/errors.js';

// Social login.
export const SOCIAL_ERRORS = defineErrors('src/identity/social/social.errors.ts', {
  SocialProviderNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SocialProviderNotFound', description: 'social login with a provider that is not enabled' },
  SocialRedirectNotAllowed: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_SocialRedirectNotAllowed', description: 'a `redirectUrl` other than the configured address' },
  SocialCodeInvalid: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_SocialCodeInvalid', description: 'a `socialCode` that is unknown, expired, already used or of another store' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof SOCIAL_ERRORS> {}
}

export const socialCodeInvalid = () => new AppError('SocialCodeInvalid', 'the socialCode is unknown, expired or already used');
export const providerNotFound = (provider: string) => new AppError('SocialProviderNotFound', `social login with "${provider}" is not enabled`);
export const redirectNotAllowed = () => new AppError('SocialRedirectNotAllowed', 'redirectUrl must be exactly the configured address');

// The `error` query parameter of the client's callback: a stable word, never provider text.
export type SocialFailure = 'access_denied' | 'state_mismatch' | 'provider_error' | 'login_failed';
