import { Injectable } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import type { Response } from 'express';
import type { SessionData } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { SessionResponse } from '../session/index.js';
import { SessionService } from '../session/session.service.js';
import { LoginTokenService } from './login-tokens.service.js';
import { TokenCookies } from './token-cookies.js';

// A completed second factor: the session, and with refresh tokens on a fresh pair.
export class SecondFactorDoneResponse extends SessionResponse {
  @ApiPropertyOptional({ description: 'With `accessTokenMinutes` set: the next refresh token (the login\'s earlier one no longer works).' }) refreshToken?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'With `accessTokenMinutes` set: when the new access token expires.' }) accessTokenExpiresAt?: string;
}

// The one answer of every completed second factor (email and mobile codes, an authenticator
// app, a recovery code): with refresh tokens on, the completed login gets a fresh pair (and
// cookies); otherwise the session with the access token it already has.
@Injectable()
export class SecondFactorAnswer {
  constructor(
    private readonly sessions: SessionService,
    private readonly loginTokens: LoginTokenService,
    private readonly cookies: TokenCookies,
  ) {}

  async send(store: Tenant, session: SessionData, accessToken: string | undefined, res: Response) {
    const tokens = await this.loginTokens.afterSecondFactor(session);
    if (!tokens) return this.sessions.toResponse(session, accessToken);
    this.cookies.send(res, store, tokens);
    return this.loginTokens.answer(session, tokens);
  }
}
