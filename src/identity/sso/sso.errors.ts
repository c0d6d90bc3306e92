import { HttpStatus } from '@nestjs/common';
import { AppError, defineErrors, type CodesOf } from '../../kernel/errors.js';

// Single sign-on.
export const SSO_ERRORS = defineErrors('src/identity/sso/sso.errors.ts', {
  SsoNotConfigured: { status: HttpStatus.NOT_FOUND, message: 'errMsg_SsoNotConfigured', description: 'single sign-on when `sso` is not configured' },
  SsoProviderUnavailable: { status: HttpStatus.BAD_GATEWAY, message: 'errMsg_SsoProviderUnavailable', description: '`GET /auth-api/sso/login` when the provider cannot be used: its discovery document unreachable, failing, or naming another issuer than `tokenHost`; the cause is logged at warn' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof SSO_ERRORS> {}
}

export const ssoNotConfigured = () => new AppError('SsoNotConfigured', 'single sign-on is not configured');

// The provider cannot be used (discovery unreachable, failing, or naming another issuer): the
// provider's fault or its settings', never the client's; the cause goes to the log.
export const ssoProviderUnavailable = () => new AppError('SsoProviderUnavailable', 'the single sign-on provider cannot be reached or its discovery document is unusable');
