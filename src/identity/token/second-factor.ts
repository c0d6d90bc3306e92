import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { SessionData } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { LoginTokenService } from './login-tokens.service.js';
import { TokenCookies } from './token-cookies.js';

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
