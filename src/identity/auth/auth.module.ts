import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessModule } from '../access/access.module.js';
import { ApiKeyModule } from '../apikey/api-key.module.js';
import { RemoteSessionModule } from '../remote-session/remote-session.module.js';
import { SessionModule } from '../session/session.module.js';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { VerificationModule } from '../verification/verification.module.js';
import { AuthController } from './auth.controller.js';
import { AuthGuard } from './auth.guard.js';
import { AuthService } from './auth.service.js';
import { CallerResolver } from './caller-resolver.js';
import { IntrospectionService } from './introspection.service.js';
import { TokenController } from './token.controller.js';
import { TokenModule } from '../token/token.module.js';

@Module({
  imports: [TokenModule, UserModule, SessionModule, StoreModule, ApiKeyModule, VerificationModule, AccessModule, RemoteSessionModule],
  controllers: [AuthController, TokenController],
  providers: [CallerResolver, AuthService, IntrospectionService, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [CallerResolver, AuthService, SessionModule, TokenModule],
})
export class AuthModule {}
