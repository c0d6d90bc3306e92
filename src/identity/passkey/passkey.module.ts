import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { SessionModule } from '../session/session.module.js';
import { UserModule } from '../user/user.module.js';
import { PasskeyController } from './passkey.controller.js';
import { PasskeyRepository } from './passkey.repository.js';
import { PasskeyService } from './passkey.service.js';

@Module({
  imports: [AuthModule, UserModule, SessionModule],
  controllers: [PasskeyController],
  providers: [PasskeyRepository, PasskeyService],
  exports: [PasskeyService],
})
export class PasskeyModule {}
