import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { UserModule } from '../user/user.module.js';
import { SocialController } from './social.controller.js';
import { SocialProviderRegistry } from './social-provider-registry.js';
import { SocialSecrets } from './social-secrets.js';
import { SocialRepository } from './social.repository.js';
import { SocialService } from './social.service.js';

// The sign-in providers, for every module: an extension injects the registry to register its
// own in onModuleInit. The settings' providers are built first, their strategies loaded (none
// by default).
@Global()
@Module({
  providers: [
    SocialSecrets,
    {
      provide: SocialProviderRegistry,
      inject: [AppConfig, BootChecks, SocialSecrets],
      useFactory: (config: AppConfig, checks: BootChecks, secrets: SocialSecrets): Promise<SocialProviderRegistry> => SocialProviderRegistry.fromSettings(config, checks, secrets),
    },
  ],
  exports: [SocialProviderRegistry, SocialSecrets],
})
export class SocialProvidersModule {}

@Module({
  imports: [AuthModule, UserModule, SocialProvidersModule],
  controllers: [SocialController],
  providers: [SocialRepository, SocialService],
  exports: [SocialService],
})
export class SocialModule {}
