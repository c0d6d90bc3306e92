import { Module } from '@nestjs/common';
import { NotificationModule } from '../../delivery/notification/notification.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { UserModule } from '../user/user.module.js';
import { VerificationModule } from '../verification/verification.module.js';
import { PasswordlessController } from './passwordless.controller.js';
import { PasswordlessService } from './passwordless.service.js';

@Module({
  imports: [AuthModule, UserModule, VerificationModule, NotificationModule],
  controllers: [PasswordlessController],
  providers: [PasswordlessService],
})
export class PasswordlessModule {}
