import { Injectable } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import type { Response } from 'express';
import type { SessionData } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { SessionResponse } from '../session/index.js';
import { LoginTokenService } from './login-tokens.service.js';
import { TokenCookies } from './token-cookies.js';

// A completed second factor: the session with fresh tokens (those of the pending sign-in said so,
// `acr: pending`, and finish it only).
export class SecondFactorDoneResponse extends SessionResponse {
  @ApiPropertyOptional({ description: 'A token for the avatar bucket, as login gives (the pending sign-in\'s one no longer serves).' }) userBucketToken?: string;
  @ApiPropertyOptional({ description: 'With `accessTokenMinutes` set: the next refresh token (the login\'s earlier one no longer works).' }) refreshToken?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'With `accessTokenMinutes` set: when the new access token expires.' }) accessTokenExpiresAt?: string;
}

// The one answer of every completed second factor (email and mobile codes, an authenticator
// app, a recovery code, a passkey) and of an enrolment that completed a sign-in: the session with
// fresh tokens, as cookies too. While another factor is still pending, they still say `pending`.
@Injectable()
export class SecondFactorAnswer {
  constructor(private readonly loginTokens: LoginTokenService, private readonly cookies: TokenCookies) {}

  async send(store: Tenant, session: SessionData, res: Response) {
    const tokens = await this.loginTokens.afterSecondFactor(session);
    this.cookies.send(res, store, tokens);
    return this.loginTokens.answer(session, tokens);
  }
}
