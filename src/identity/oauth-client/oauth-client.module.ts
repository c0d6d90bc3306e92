import { Module } from '@nestjs/common';
import { OAuthClientController } from './oauth-client.controller.js';
import { OAuthClientRepository } from './oauth-client.repository.js';
import { OAuthClientService } from './oauth-client.service.js';

// The store's OAuth clients of the OpenID Connect provider: their registration routes, and the
// look-ups the provider makes (`OAuthClientService.metadataFor`, `.findByClientId`).
@Module({
  controllers: [OAuthClientController],
  providers: [OAuthClientRepository, OAuthClientService],
  exports: [OAuthClientService],
})
export class OAuthClientModule {}
