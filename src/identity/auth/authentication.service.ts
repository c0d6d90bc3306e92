import { Injectable } from '@nestjs/common';
import { PENDING_ACR } from '../../kernel/assurance.js';
import { AppError } from '../../kernel/errors.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { RemoteSessionService } from '../remote-session/remote-session.service.js';
import { SessionService } from '../session/session.service.js';
import type { SessionData } from '../../kernel/principal.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { RateLimits } from '../../kernel/rate-limit/rate-limit.js';
import { TokenCookies } from '../token/token-cookies.js';
import { accessTokenName, extractApiKey, extractToken } from '../token/token-extractor.js';
import { TokenService } from '../token/token.service.js';

// Who is calling: the token from the request, verified, and its live session.
@Injectable()
export class AuthenticationService {
  constructor(
    private readonly tokens: TokenService,
    private readonly sessions: SessionService,
    private readonly config: AppConfig,
    private readonly remote: RemoteSessionService,
    private readonly cookies: TokenCookies,
    private readonly limits: RateLimits,
  ) {}

  private readonly apiKeyPrefix = `sk_${this.config.env.PROJECT_CODENAME}_`;

  apiKeyFrom(req: ContextRequest): string | undefined {
    return this.config.settings.apiKeys.enabled ? extractApiKey(req, this.config.settings.apiKeys, this.apiKeyPrefix) : undefined;
  }

  // The names an access token may have in a store's requests, kept per codename (asked on every
  // authenticated request); emptied should a deployment's stores outgrow it.
  private readonly namesByStore = new Map<string, string[]>();

  // The store's name first; the root name too, for a super administrator acting in a store.
  private tokenNames(store: Tenant): string[] {
    let names = this.namesByStore.get(store.codename);
    if (!names) {
      names = [this.cookies.accessName(store)];
      if (store.codename !== ROOT_CODENAME) names.push(accessTokenName(this.config.env.PROJECT_CODENAME, ROOT_CODENAME, ROOT_CODENAME));
      if (this.namesByStore.size >= 10_000) this.namesByStore.clear();
      this.namesByStore.set(store.codename, names);
    }
    return names;
  }

  // Whether the request carries an access token at all (a bad one is not the same as none).
  hasToken(req: ContextRequest): boolean {
    return extractToken(req, this.tokenNames(req.ctx.store!), (v) => v.startsWith(this.apiKeyPrefix)) !== undefined;
  }

  // `pending`: the token was issued while its sign-in was unfinished (`acr: pending`).
  async authenticate(req: ContextRequest, opts: { bucketToken?: boolean; secondFactorRoute?: boolean } = {}): Promise<{ session: SessionData; token: string; pending: boolean }> {
    const token = extractToken(req, this.tokenNames(req.ctx.store!), (v) => v.startsWith(this.apiKeyPrefix));
    if (!token) throw new AppError('Unauthorized', 'no access token');
    // A token the remote service issued stands for its session there (settings remoteSession).
    if (this.remote.handles(token)) return { session: await this.remote.authenticate(req.ctx.store!, token), token, pending: false };
    const claims = this.tokens.verifiedBefore(token)?.claims ?? (await this.tokens.verify(token));
    if (claims.use === 'bucket' && !opts.bucketToken) throw new AppError('Unauthorized', 'a bucket token is not an access token');
    const session = await this.sessions.get(claims.storeId, claims.sessionId);
    if (!session || session.userId !== claims.userId) {
      // Only on this refusal path, never for a live session: a sign-in that too many wrong
      // authenticator codes ended answers its further tries 429, on any replica (the counter
      // is the mfa feature's limit, in Redis when configured).
      if (opts.secondFactorRoute && (await this.limits.exhausted('totpPerSession', claims.sessionId))) {
        throw new AppError('TotpAttemptsExceeded', 'too many wrong codes ended this sign-in: log in again');
      }
      throw new AppError('Unauthorized', 'the session has ended');
    }
    return { session, token, pending: claims.acr === PENDING_ACR };
  }

  // The login if the request carries a valid token, otherwise nothing (logout, open routes).
  async tryAuthenticate(req: ContextRequest): Promise<{ session: SessionData; pending: boolean } | undefined> {
    try {
      return await this.authenticate(req);
    } catch (error) {
      if (error instanceof AppError && error.status === 401) return undefined;
      throw error;
    }
  }
}
