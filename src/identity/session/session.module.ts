import { Module } from '@nestjs/common';
import { UserModule } from '../user/user.module.js';
import { sessionCacheProvider } from './session-cache.js';
import { SessionController } from './session.controller.js';
import { SessionRepository } from './session.repository.js';
import { SessionService } from './session.service.js';

@Module({
  imports: [UserModule],
  controllers: [SessionController],
  providers: [SessionRepository, SessionService, sessionCacheProvider],
  exports: [SessionService],
})
export class SessionModule {}
