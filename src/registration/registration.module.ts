import { Module } from '@nestjs/common';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { RegistrationController } from './registration.controller.js';
import { RegistrationService } from './registration.service.js';

@Module({
  imports: [StoreModule, UserModule],
  controllers: [RegistrationController],
  providers: [RegistrationService],
})
export class RegistrationModule {}
