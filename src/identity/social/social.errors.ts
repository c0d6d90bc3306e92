import { AppError } from '../../kernel/errors.js';

// The catalogue entries live in src/kernel/errors.ts; these are the ones social login raises.
export const socialCodeInvalid = () => new AppError('SocialCodeInvalid', 'the socialCode is unknown, expired or already used');
export const providerNotFound = (provider: string) => new AppError('SocialProviderNotFound', `social login with "${provider}" is not enabled`);
export const redirectNotAllowed = () => new AppError('SocialRedirectNotAllowed', 'redirectUrl must be exactly the configured address');

// The `error` query parameter of the client's callback: a stable word, never provider text.
export type SocialFailure = 'access_denied' | 'state_mismatch' | 'provider_error' | 'login_failed';
