import { Module } from '@nestjs/common';
import { SocialModule } from '../social/social.module.js';
import { SsoController } from './sso.controller.js';
import { SsoService } from './sso.service.js';

@Module({
  imports: [SocialModule],
  controllers: [SsoController],
  providers: [SsoService],
})
export class SsoModule {}
