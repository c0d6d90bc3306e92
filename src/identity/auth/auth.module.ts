import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { AccessModule } from '../../access/access.module.js';
import { ApiKeyModule } from '../apikey/api-key.module.js';
import { RemoteSessionModule } from '../remote-session/remote-session.module.js';
import { SessionModule } from '../session/session.module.js';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { VerificationModule } from '../verification/verification.module.js';
import { AuthController } from './auth.controller.js';
import { AuthGuard } from './auth.guard.js';
import { AuthService } from './auth.service.js';
import { AuthenticationService } from './authentication.service.js';
import { KeyService } from './key.service.js';
import { SigningKeyRepository } from './signing-key.repository.js';
import { TokenService } from './token.service.js';

@Module({
  imports: [JwtModule.register({}), UserModule, SessionModule, StoreModule, ApiKeyModule, VerificationModule, AccessModule, RemoteSessionModule],
  controllers: [AuthController],
  providers: [SigningKeyRepository, KeyService, TokenService, AuthenticationService, AuthService, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [AuthenticationService, AuthService, SessionModule],
})
export class AuthModule {}
