import { Module } from '@nestjs/common';
import { NotificationModule } from '../../delivery/notification/notification.module.js';
import { SessionModule } from '../session/session.module.js';
import { TokenModule } from '../token/token.module.js';
import { UserModule } from '../user/user.module.js';
import { VerificationCodes } from './verification-codes.service.js';
import { VerificationController } from './verification.controller.js';
import { VerificationGate } from './verification.gate.js';
import { VerificationRepository } from './verification.repository.js';
import { VerificationService } from './verification.service.js';

@Module({
  imports: [UserModule, SessionModule, TokenModule, NotificationModule],
  controllers: [VerificationController],
  providers: [VerificationRepository, VerificationService, VerificationGate, VerificationCodes],
  // VerificationCodes: the codes' storage and rules, for passwordless sign-in.
  exports: [VerificationGate, VerificationCodes],
})
export class VerificationModule {}
