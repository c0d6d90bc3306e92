import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import type { ContextRequest } from '../common/request-context.js';
import { AppConfig } from '../config/app-config.js';
import { SessionService } from '../session/session.service.js';
import type { SessionData } from '../session/session.types.js';
import { ROOT_CODENAME, type StoreEntity } from '../store/store.entity.js';
import { accessTokenName, extractApiKey, extractToken } from './token-extractor.js';
import { TokenService } from './token.service.js';

// Who is calling: the token from the request, verified, and its live session.
@Injectable()
export class AuthenticationService {
  constructor(
    private readonly tokens: TokenService,
    private readonly sessions: SessionService,
    private readonly config: AppConfig,
  ) {}

  private readonly apiKeyPrefix = `sk_${this.config.env.PROJECT_CODENAME}_`;

  apiKeyFrom(req: ContextRequest): string | undefined {
    return this.config.settings.apiKeys.enabled ? extractApiKey(req, this.config.settings.apiKeys, this.apiKeyPrefix) : undefined;
  }

  // Header and cookie name for the targeted store.
  tokenName(store: StoreEntity): string {
    return accessTokenName(this.config.env.PROJECT_CODENAME, store.codename, ROOT_CODENAME);
  }

  // The store's name first; the root name too, for a super administrator acting in a store.
  private tokenNames(store: StoreEntity): string[] {
    const names = [this.tokenName(store)];
    if (store.codename !== ROOT_CODENAME) names.push(accessTokenName(this.config.env.PROJECT_CODENAME, ROOT_CODENAME, ROOT_CODENAME));
    return names;
  }

  async authenticate(req: ContextRequest, opts: { bucketToken?: boolean } = {}): Promise<{ session: SessionData; token: string }> {
    const token = extractToken(req, this.tokenNames(req.ctx.store!), (v) => v.startsWith(this.apiKeyPrefix));
    if (!token) throw new AppError('Unauthorized', 'no access token');
    const claims = await this.tokens.verify(token);
    if (claims.use === 'bucket' && !opts.bucketToken) throw new AppError('Unauthorized', 'a bucket token is not an access token');
    const session = await this.sessions.get(claims.storeId, claims.sessionId);
    if (!session || session.userId !== claims.userId) throw new AppError('Unauthorized', 'the session has ended');
    return { session, token };
  }

  // The session if the request carries a valid token, otherwise nothing (logout).
  async tryAuthenticate(req: ContextRequest): Promise<SessionData | undefined> {
    try {
      return (await this.authenticate(req)).session;
    } catch (error) {
      if (error instanceof AppError && error.status === 401) return undefined;
      throw error;
    }
  }
}
