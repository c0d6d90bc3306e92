import { Module } from '@nestjs/common';
import { UserModule } from '../user/user.module.js';
import { RemoteSessionService } from './remote-session.service.js';

@Module({
  imports: [UserModule],
  providers: [RemoteSessionService],
  exports: [RemoteSessionService],
})
export class RemoteSessionModule {}
