import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { SessionModule } from '../session/session.module.js';
import { SigningKeyModule } from '../signing-key/signing-key.module.js';
import { LoginTokenService } from './login-tokens.service.js';
import { RefreshTokenRepository } from './refresh-token.repository.js';
import { RefreshTokenService } from './refresh-token.service.js';
import { SecondFactorAnswer } from './second-factor.js';
import { TokenCookies } from './token-cookies.js';
import { TokenIssuerService } from './token-issuer.service.js';
import { TokenVerifierService } from './token-verifier.service.js';

// Access and bucket tokens, refresh tokens and their cookies, signed with the signing-key
// feature's keys (re-exported: the discovery routes publish them). A service per job: issuing a
// session's tokens (TokenIssuerService, kept inside: other features get tokens through a login),
// verifying them (TokenVerifierService), a login's tokens and answer (LoginTokenService), refresh
// tokens and their rotation (RefreshTokenService), the cookies (TokenCookies) and the answer of a
// completed second factor (SecondFactorAnswer). Reading a token from a request: token-extractor.ts.
@Module({
  imports: [JwtModule.register({}), SessionModule, SigningKeyModule],
  providers: [TokenIssuerService, TokenVerifierService, RefreshTokenRepository, RefreshTokenService, LoginTokenService, TokenCookies, SecondFactorAnswer],
  exports: [SigningKeyModule, TokenVerifierService, LoginTokenService, RefreshTokenService, TokenCookies, SecondFactorAnswer],
})
export class TokenModule {}
