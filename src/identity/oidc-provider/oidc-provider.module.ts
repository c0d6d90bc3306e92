import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { MfaModule } from '../mfa/mfa.module.js';
import { OAuthClientModule } from '../oauth-client/index.js';
import { SessionModule } from '../session/session.module.js';
import { SigningKeyModule } from '../signing-key/signing-key.module.js';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { OidcConsentController, UserOidcConsentController } from './oidc-consent.controller.js';
import { OidcConsentService } from './oidc-consent.service.js';
import { OidcInteractions } from './oidc-interactions.js';
import { OidcPayloadSweep } from './oidc-payload.sweep.js';
import { OidcPayloadRepository } from './oidc-payload.repository.js';
import { OidcProviderMiddleware } from './oidc-provider.middleware.js';
import { OidcProviderService } from './oidc-provider.service.js';

// The OpenID Connect provider (docs/oidc.md): one oidc-provider per store, its storage, its
// sign-in pages, the Express middleware app.ts mounts at /auth-api/oidc/{codename}, the users'
// remembered consents (their routes) and the sweep of expired rows.
@Module({
  imports: [OAuthClientModule, SigningKeyModule, UserModule, StoreModule, SessionModule, AuthModule, MfaModule],
  controllers: [OidcConsentController, UserOidcConsentController],
  providers: [OidcPayloadRepository, OidcProviderService, OidcInteractions, OidcProviderMiddleware, OidcConsentService, OidcPayloadSweep],
  exports: [OidcProviderMiddleware],
})
export class OidcProviderModule {}
