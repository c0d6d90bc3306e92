import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// The OpenID Connect provider's routes: a user's remembered consents.
export const OIDC_PROVIDER_ERRORS = defineErrors('src/identity/oidc-provider/oidc-provider.errors.ts', {
  OAuthConsentNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_OAuthConsentNotFound', description: 'no such consent (a live grant of the OpenID Connect provider) of this user in this store' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof OIDC_PROVIDER_ERRORS> {}
}
