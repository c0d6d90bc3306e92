import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { UserModule } from '../user/user.module.js';
import { SocialController } from './social.controller.js';
import { SocialPassportGuard } from './social.guard.js';
import { SocialRepository } from './social.repository.js';
import { SocialService } from './social.service.js';

// Apple returns to its callback with an HTML form post (`response_mode=form_post`).
export const FORM_POST_CALLBACKS = /^\/auth-api\/auth\/apple\/callback$/;

@Module({
  imports: [AuthModule, UserModule],
  controllers: [SocialController],
  providers: [
    SocialRepository,
    SocialService,
    SocialPassportGuard,
  ],
  exports: [SocialService],
})
export class SocialModule {}
