import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// The store's OAuth clients of the OpenID Connect provider.
export const OAUTH_CLIENT_ERRORS = defineErrors('src/identity/oauth-client/oauth-client.errors.ts', {
  OidcProviderDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_OidcProviderDisabled', description: 'an OAuth client route while `oidcProvider.enabled` is false' },
  OAuthClientNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_OAuthClientNotFound', description: 'no such OAuth client in this store' },
  OAuthClientInvalid: {
    status: HttpStatus.BAD_REQUEST,
    message: 'errMsg_OAuthClientInvalid',
    description: 'the client\'s metadata do not hold together (a redirect URI that is not https, loopback http or, for a public client, a private-use scheme; a fragment; a grant type its authentication method cannot use; a JWK Set missing or with private members; a secret rotated for a client without one); the detail names the problem',
  },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof OAUTH_CLIENT_ERRORS> {}
}
