import { AppError } from '../../kernel/errors.js';

// The catalogue entries live in src/kernel/errors.ts.
export const ssoNotConfigured = () => new AppError('SsoNotConfigured', 'single sign-on is not configured');

// The provider cannot be used (discovery unreachable, failing, or naming another issuer): the
// provider's fault or its settings', never the client's; the cause goes to the log.
export const ssoProviderUnavailable = () => new AppError('SsoProviderUnavailable', 'the single sign-on provider cannot be reached or its discovery document is unusable');
