import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { SessionModule } from '../session/session.module.js';
import { SigningKeyModule } from '../signing-key/signing-key.module.js';
import { LoginTokenService } from './login-tokens.service.js';
import { RefreshTokenRepository } from './refresh-token.repository.js';
import { SecondFactorAnswer } from './second-factor.js';
import { TokenCookies } from './token-cookies.js';
import { TokenService } from './token.service.js';

// Access and bucket tokens, refresh tokens and their cookies, signed with the signing-key
// feature's keys (re-exported: the discovery routes publish them).
@Module({
  imports: [JwtModule.register({}), SessionModule, SigningKeyModule],
  providers: [TokenService, RefreshTokenRepository, LoginTokenService, TokenCookies, SecondFactorAnswer],
  exports: [SigningKeyModule, TokenService, LoginTokenService, TokenCookies, SecondFactorAnswer],
})
export class TokenModule {}
