import { Injectable } from '@nestjs/common';
import type { SessionData } from '../../kernel/principal.js';
import { SessionService } from '../session/session.service.js';
import { RefreshTokenService } from './refresh-token.service.js';
import { TokenIssuerService } from './token-issuer.service.js';
import type { LoginTokens } from './token.types.js';

// The tokens of a login, and the answer that hands them over. Without accessTokenMinutes, one
// access token lives as long as its session (the contract's original behaviour). With it, the
// access token lives that many minutes and a refresh token (RefreshTokenService) gets the next
// pair while the session lives.
@Injectable()
export class LoginTokenService {
  constructor(
    private readonly issuer: TokenIssuerService,
    private readonly refreshTokens: RefreshTokenService,
    private readonly sessions: SessionService,
  ) {}

  // The spec's session object with the tokens the client is handed, and with refresh tokens on
  // the refresh token and when the access token expires.
  answer(session: SessionData, tokens: LoginTokens) {
    return {
      ...this.sessions.toResponse(session, tokens.accessToken, tokens.userBucketToken),
      ...(tokens.refreshToken && { refreshToken: tokens.refreshToken, accessTokenExpiresAt: tokens.accessTokenExpiresAt.toISOString() }),
    };
  }

  // A new session's tokens: access, bucket and (when on) refresh. While the sign-in is pending
  // each says so (`acr: pending`).
  async forNewSession(session: SessionData): Promise<LoginTokens> {
    const sessionExpiresAt = new Date(session.expiresAt);
    const [pair, userBucketToken] = await Promise.all([this.newPair(session), this.issuer.issue(session, 'bucket', sessionExpiresAt)]);
    return { ...pair, userBucketToken };
  }

  // A second factor completed: fresh tokens that say what the sign-in proved now (those issued
  // before said `pending`); with refresh tokens on, a fresh pair (the session's unspent refresh
  // tokens are dropped).
  async afterSecondFactor(session: SessionData): Promise<LoginTokens> {
    if (this.refreshTokens.on) await this.refreshTokens.dropUnspent(session.storeId, session.sessionId);
    return this.forNewSession(session);
  }

  // An access token, and with refresh tokens on a new refresh token of a new family.
  private async newPair(session: SessionData): Promise<LoginTokens> {
    if (this.refreshTokens.on) return this.refreshTokens.start(session);
    const expiresAt = new Date(session.expiresAt);
    const accessToken = await this.issuer.issue(session, 'access', expiresAt);
    return { accessToken, accessTokenExpiresAt: expiresAt, sessionExpiresAt: expiresAt };
  }
}
