import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { SessionModule } from '../session/session.module.js';
import { KeyService } from './key.service.js';
import { LoginTokenService } from './login-tokens.service.js';
import { RefreshTokenRepository } from './refresh-token.repository.js';
import { SigningKeyRepository } from './signing-key.repository.js';
import { SecondFactorAnswer } from './second-factor.js';
import { TokenCookies } from './token-cookies.js';
import { TokenService } from './token.service.js';

// Signing keys, access and bucket tokens, refresh tokens and their cookies.
@Module({
  imports: [JwtModule.register({}), SessionModule],
  providers: [SigningKeyRepository, KeyService, TokenService, RefreshTokenRepository, LoginTokenService, TokenCookies, SecondFactorAnswer],
  exports: [KeyService, TokenService, LoginTokenService, TokenCookies, SecondFactorAnswer],
})
export class TokenModule {}
