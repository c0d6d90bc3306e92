import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { AuditLog, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import type { SessionData } from '../../kernel/principal.js';
import { RateLimits } from '../../kernel/rate-limit/rate-limit.js';
import type { Tenant } from '../../kernel/tenant.js';
import { SessionService } from '../session/session.service.js';
import { namedToken, openSuccessor, sealSuccessor, sessionNamedBy, sha256 } from './refresh-token-format.js';
import type { RefreshTokenEntity } from './refresh-token.entity.js';
import { RefreshTokenRepository } from './refresh-token.repository.js';
import { TokenIssuerService } from './token-issuer.service.js';
import type { LoginTokens } from './token.types.js';
import { TokenSection } from './token.settings.js';

// A refresh token spent longer ago than this is forgotten: presented later it is refused as
// unknown instead of ending the session (a session refreshing every few minutes for a month
// would otherwise keep thousands of rows).
const REMEMBER_SPENT_MS = DAY_MS;
const MAX_REFRESH_TOKEN_LENGTH = 200;

// Refresh tokens (settings accessTokenMinutes): a session's first one with its access token,
// rotation at every use (each spent for the next pair), reuse ending the session, and the
// session a refresh token belongs to (logout, introspection).
@Injectable()
export class RefreshTokenService {
  private readonly logger = new Logger('RefreshTokenService');
  // KEY_ENCRYPTION_SECRET, when set, takes part in sealing successors: the table and a spent
  // token together then do not give the live one either.
  private readonly pepper: string;

  constructor(
    private readonly issuer: TokenIssuerService,
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly sessions: SessionService,
    private readonly limits: RateLimits,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly audit: AuditLog,
  ) {
    this.pepper = config.env.KEY_ENCRYPTION_SECRET ?? '';
  }

  get on(): boolean {
    return this.config.section(TokenSection).accessTokenMinutes !== null;
  }

  // An access token and a new refresh token of a new family, for a session starting (or whose
  // second factor completed).
  async start(session: SessionData): Promise<LoginTokens> {
    const now = this.clock.now();
    const refreshToken = namedToken(session.sessionId);
    const row: RefreshTokenEntity = {
      id: randomUUID(),
      storeId: session.storeId,
      userId: session.userId,
      sessionId: session.sessionId,
      tokenHash: sha256(refreshToken),
      // Not used by this build: a replica of the earlier one rotates with it during an upgrade.
      familyKey: randomBytes(32).toString('hex'),
      createdAt: now,
      expiresAt: new Date(session.expiresAt),
      spentAt: null,
      successorId: null,
      successorSealed: null,
    };
    await this.refreshTokens.insert(row);
    return this.pair(session, row.id, now, refreshToken);
  }

  // The session's unspent refresh tokens dropped (a completed second factor gets a fresh pair).
  dropUnspent(storeId: string, sessionId: string): Promise<void> {
    return this.refreshTokens.deleteUnspent(storeId, sessionId);
  }

  // Rotation: the refresh token is spent and the next pair answered. Within the grace window a
  // spent token answers the pair it produced again; later it ends its session (reuse).
  async rotate(store: Tenant, token: string | undefined, ip: string | undefined, context: AuditContext = {}): Promise<{ session: SessionData; tokens: LoginTokens }> {
    const now = this.clock.now();
    const usable = !!token && token.length <= MAX_REFRESH_TOKEN_LENGTH && store.isActive;
    const tokenHash = usable ? sha256(token) : undefined;
    // The session the token names; a token of a previous build names none, and its row says.
    const sessionId = usable ? (sessionNamedBy(token) ?? (await this.refreshTokens.findByHash(store.id, tokenHash!))?.sessionId) : undefined;
    // The address's limit, the session's and the session itself are asked together: with Redis
    // they go out in one write (one round trip). Every call takes a point of its address. The
    // session's limit is only read here: a point of it is taken once the token proved itself by
    // being spent, so made-up tokens naming someone's session (its id is in every access token)
    // count against their sender's address only, never against that session.
    const [, , session] = await Promise.all([
      this.limits.consume('refreshPerIp', ip ?? 'unknown'),
      sessionId && this.limits.assertOpen('refreshPerSession', sessionId),
      sessionId ? this.sessions.get(store.id, sessionId) : undefined,
    ]);
    if (!token || !sessionId || !session) throw invalid();

    const successor = { id: randomUUID(), token: namedToken(sessionId) };
    // The successor's access token is signed (on the signing thread) while the statement runs:
    // everything it carries is known now. A call that spends nothing drops it.
    const signing = this.pair(session, successor.id, now, successor.token);
    signing.catch(() => undefined);
    const { row, spent } = await this.refreshTokens.spend(
      store.id,
      tokenHash!,
      { sessionId, userId: session.userId },
      { id: successor.id, tokenHash: sha256(successor.token), sealed: sealSuccessor(token, successor.token, this.pepper) },
      now,
      new Date(now.getTime() - REMEMBER_SPENT_MS),
    );
    if (spent) {
      this.chargeSession(sessionId);
      return { session, tokens: await signing };
    }
    if (!row || row.sessionId !== sessionId || row.userId !== session.userId || row.expiresAt <= now) throw invalid();
    // Unspent, yet not spent by this call: another request (on any replica) spent it a moment ago.
    const spentRow = row.spentAt ? row : await this.refreshTokens.findById(store.id, row.id);
    if (!spentRow?.spentAt) throw invalid();
    const graceMs = this.config.section(TokenSection).refreshReuseGraceSeconds * 1000;
    if (graceMs > 0 && spentRow.successorId && now.getTime() - spentRow.spentAt.getTime() <= graceMs) {
      const next = await this.refreshTokens.findById(store.id, spentRow.successorId);
      const nextToken = next && this.successorOf(spentRow, token);
      if (next && nextToken && sha256(nextToken) === next.tokenHash) {
        this.chargeSession(sessionId);
        return { session, tokens: await this.pair(session, next.id, next.createdAt, nextToken) };
      }
    }
    // The session's end and its entry in one transaction.
    await this.sessions.end(store.id, { id: sessionId }, (_count, tx) =>
      this.audit.record(
        {
          storeId: store.id,
          action: 'session.refresh.reused',
          outcome: 'failure',
          reason: 'refresh_token_reused',
          actor: { type: 'anonymous', id: null },
          target: { type: 'session', id: sessionId },
          details: { userId: row.userId },
        },
        { ...context, sessionId },
        tx,
      ),
    );
    throw new AppError('RefreshTokenReused', 'this refresh token was already used: the session has ended, log in again');
  }

  // A refresh the session's own token made counts against the session's limit. Not awaited: the
  // token is spent and its successor is the caller's either way (a lost count is the only cost of
  // a Redis failure here), and the next call's read sees it.
  private chargeSession(sessionId: string): void {
    this.limits.penalize('refreshPerSession', sessionId).catch((err: unknown) => this.logger.warn({ err, sessionId }, 'could not count a refresh against its session\'s limit'));
  }

  // The live session of an unspent refresh token of the store (logout with a refresh token), or
  // undefined.
  async sessionOf(store: Tenant, token: string): Promise<SessionData | undefined> {
    const row = token.length <= MAX_REFRESH_TOKEN_LENGTH ? await this.refreshTokens.findByHash(store.id, sha256(token)) : undefined;
    return row ? this.liveSession(row) : undefined;
  }

  // A live, unspent refresh token's row and session, in any store (introspection), or undefined.
  async inspect(token: string): Promise<{ row: RefreshTokenEntity; session: SessionData } | undefined> {
    if (token.length > MAX_REFRESH_TOKEN_LENGTH) return undefined;
    const row = await this.refreshTokens.findByHashInAnyStore(sha256(token));
    const session = row && (await this.liveSession(row));
    return row && session ? { row, session } : undefined;
  }

  private async liveSession(row: RefreshTokenEntity): Promise<SessionData | undefined> {
    if (row.spentAt || row.expiresAt <= this.clock.now()) return undefined;
    const session = await this.sessions.get(row.storeId, row.sessionId);
    return session?.userId === row.userId ? session : undefined;
  }

  // The access token that goes with refresh token `jti`, issued at `issuedAt`: the same inputs
  // give the same token, so a retry gets the very pair.
  private async pair(session: SessionData, jti: string, issuedAt: Date, refreshToken: string): Promise<LoginTokens> {
    const sessionExpiresAt = new Date(session.expiresAt);
    // Whole seconds, as the token's `exp`.
    const expiresMs = Math.min(issuedAt.getTime() + this.config.section(TokenSection).accessTokenMinutes! * 60_000, sessionExpiresAt.getTime());
    const accessTokenExpiresAt = new Date(Math.floor(expiresMs / 1000) * 1000);
    const accessToken = await this.issuer.issue(session, 'access', accessTokenExpiresAt, { jti, issuedAt });
    return { accessToken, accessTokenExpiresAt, sessionExpiresAt, refreshToken };
  }

  // The token that replaced the spent `token`: unsealed from its row, or for a token spent by a
  // previous build (no sealed successor) derived from the family key as that build did.
  private successorOf(row: RefreshTokenEntity, token: string): string | undefined {
    if (row.successorSealed) return openSuccessor(token, row.successorSealed, this.pepper);
    return createHmac('sha256', `${row.familyKey}:${this.pepper}`).update(token).digest('base64url');
  }
}

function invalid(): AppError {
  return new AppError('RefreshTokenInvalid', 'unknown, expired or revoked refresh token');
}
