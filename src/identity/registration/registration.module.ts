import { Module } from '@nestjs/common';
import { SocialModule } from '../social/social.module.js';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { VerificationModule } from '../verification/verification.module.js';
import { RegistrationController } from './registration.controller.js';
import { RegistrationService } from './registration.service.js';

@Module({
  imports: [StoreModule, UserModule, SocialModule, VerificationModule],
  controllers: [RegistrationController],
  providers: [RegistrationService],
})
export class RegistrationModule {}
