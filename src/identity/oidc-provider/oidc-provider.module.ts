import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { MfaModule } from '../mfa/mfa.module.js';
import { OAuthClientModule } from '../oauth-client/index.js';
import { SessionModule } from '../session/session.module.js';
import { SigningKeyModule } from '../signing-key/signing-key.module.js';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { OidcInteractions } from './oidc-interactions.js';
import { OidcPayloadRepository } from './oidc-payload.repository.js';
import { OidcProviderMiddleware } from './oidc-provider.middleware.js';
import { OidcProviderService } from './oidc-provider.service.js';

// The OpenID Connect provider (docs/oidc.md): one oidc-provider per store, its storage, its
// sign-in pages, and the Express middleware app.ts mounts at /auth-api/oidc/{codename}.
@Module({
  imports: [OAuthClientModule, SigningKeyModule, UserModule, StoreModule, SessionModule, AuthModule, MfaModule],
  providers: [OidcPayloadRepository, OidcProviderService, OidcInteractions, OidcProviderMiddleware],
  exports: [OidcProviderMiddleware],
})
export class OidcProviderModule {}
