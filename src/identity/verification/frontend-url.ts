import { AppError } from '../../kernel/errors.js';
import type { VerificationSettings } from './verification.settings.js';

// The client application a link points to, without a trailing slash: the one the request names
// when it is `verification.frontendUrl` or one of `verification.frontendUrls`, exactly (a link
// carries a secret: it goes nowhere the deployment did not list); `frontendUrl` when it names none.
// Verification links and passwordless sign-in links alike.
export function linkBase(settings: Pick<VerificationSettings, 'frontendUrl' | 'frontendUrls'>, requested?: string): string {
  if (requested !== undefined && requested !== settings.frontendUrl && !(settings.frontendUrls ?? []).includes(requested)) {
    throw new AppError('FrontendUrlNotAllowed', 'frontendUrl must be exactly the configured verification.frontendUrl or one of verification.frontendUrls');
  }
  return (requested ?? settings.frontendUrl).replace(/\/$/, '');
}
