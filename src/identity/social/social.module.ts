import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { UserModule } from '../user/user.module.js';
import { SocialController } from './social.controller.js';
import { SocialPassportGuard } from './social.guard.js';
import { SocialRepository } from './social.repository.js';
import { SocialService } from './social.service.js';
import { SocialStrategies } from './social.strategies.js';

// Apple returns to its callback with an HTML form post (`response_mode=form_post`).
export const FORM_POST_CALLBACKS = /^\/auth-api\/auth\/apple\/callback$/;

// The passport strategies of the configured providers only (none by default).
const strategiesProvider = {
  provide: SocialStrategies,
  inject: [AppConfig],
  useFactory: (config: AppConfig): Promise<SocialStrategies> => SocialStrategies.load([...config.socialLogin.providers.values()].map((p) => p.name)),
};

@Module({
  imports: [AuthModule, UserModule],
  controllers: [SocialController],
  providers: [
    SocialRepository,
    SocialService,
    SocialPassportGuard,
    strategiesProvider,
  ],
  exports: [SocialService],
})
export class SocialModule {}
