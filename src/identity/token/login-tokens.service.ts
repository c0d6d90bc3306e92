import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { AuditLog, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import type { SessionData } from '../../kernel/principal.js';
import { RateLimits } from '../../kernel/rate-limit/rate-limit.js';
import type { Tenant } from '../../kernel/tenant.js';
import { SessionService } from '../session/session.service.js';
import type { RefreshTokenEntity } from './refresh-token.entity.js';
import { RefreshTokenRepository } from './refresh-token.repository.js';
import { TokenService } from './token.service.js';

// What a login (or a refresh) hands the client.
export interface LoginTokens {
  accessToken: string;
  accessTokenExpiresAt: Date;
  sessionExpiresAt: Date;
  // At login only: a token for the avatar bucket, living as long as the session.
  userBucketToken?: string;
  // With accessTokenMinutes: the opaque token that gets the next pair.
  refreshToken?: string;
}

// A refresh token spent longer ago than this is forgotten: presented later it is refused as
// unknown instead of ending the session (a session refreshing every few minutes for a month
// would otherwise keep thousands of rows).
const REMEMBER_SPENT_MS = DAY_MS;
const MAX_REFRESH_TOKEN_LENGTH = 200;

// The tokens of a login. Without accessTokenMinutes, one access token lives as long as its
// session (the contract's original behaviour). With it, the access token lives that many
// minutes and a refresh token, rotated at every use, gets the next pair while the session lives.
@Injectable()
export class LoginTokenService {
  // KEY_ENCRYPTION_SECRET, when set, takes part in deriving successors: the table alone then
  // does not let a spent token be turned into the live one.
  private readonly pepper: string;

  constructor(
    private readonly tokens: TokenService,
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly sessions: SessionService,
    private readonly limits: RateLimits,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly audit: AuditLog,
  ) {
    this.pepper = config.env.KEY_ENCRYPTION_SECRET ?? '';
  }

  get refreshTokensOn(): boolean {
    return this.config.settings.accessTokenMinutes !== null;
  }

  // The spec's session object with the tokens the client is handed, and with refresh tokens on
  // the refresh token and when the access token expires.
  answer(session: SessionData, tokens: LoginTokens) {
    return {
      ...this.sessions.toResponse(session, tokens.accessToken, tokens.userBucketToken),
      ...(tokens.refreshToken && { refreshToken: tokens.refreshToken, accessTokenExpiresAt: tokens.accessTokenExpiresAt.toISOString() }),
    };
  }

  // A new session's tokens: access, bucket and (when on) refresh.
  async forNewSession(session: SessionData): Promise<LoginTokens> {
    const sessionExpiresAt = new Date(session.expiresAt);
    const claims = { sessionId: session.sessionId, userId: session.userId, storeId: session.storeId };
    const [pair, userBucketToken] = await Promise.all([this.newPair(session), this.tokens.issue({ ...claims, use: 'bucket' }, sessionExpiresAt)]);
    return { ...pair, userBucketToken };
  }

  // A second factor completed: with refresh tokens on, a fresh pair (the session's unspent
  // refresh tokens are dropped); otherwise nothing changes and undefined is answered.
  async afterSecondFactor(session: SessionData): Promise<LoginTokens | undefined> {
    if (!this.refreshTokensOn) return undefined;
    await this.refreshTokens.deleteUnspent(session.storeId, session.sessionId);
    return this.newPair(session);
  }

  // Rotation: the refresh token is spent and the next pair answered. Within the grace window a
  // spent token answers the pair it produced again; later it ends its session (reuse).
  async refresh(store: Tenant, token: string | undefined, ip: string | undefined, context: AuditContext = {}): Promise<{ session: SessionData; tokens: LoginTokens }> {
    const now = this.clock.now();
    let row = token && token.length <= MAX_REFRESH_TOKEN_LENGTH ? await this.refreshTokens.findByHash(store.id, sha256(token)) : undefined;
    const live = !!row && row.expiresAt > now && store.isActive;
    // The address's limit, the session's and the session itself are asked together: with Redis
    // they go out in one write (one round trip). Every call takes a point of its address, a live
    // token's one of its session too, before anything is spent; a refused call has only read.
    const [, , session] = await Promise.all([
      this.limits.consume('refreshPerIp', ip ?? 'unknown'),
      live && this.limits.consume('refreshPerSession', row!.sessionId),
      live ? this.sessions.get(store.id, row!.sessionId) : undefined,
    ]);
    if (!token || !row || !live || !session || session.userId !== row.userId) throw invalid();

    if (!row.spentAt) {
      const successor = { id: randomUUID(), token: this.successorOf(row, token), createdAt: now };
      const rotated = await this.refreshTokens.rotate(store.id, row.id, { id: successor.id, tokenHash: sha256(successor.token), createdAt: now }, new Date(now.getTime() - REMEMBER_SPENT_MS));
      if (rotated) return { session, tokens: await this.pair(session, successor.id, now, successor.token) };
      // Another request (on any replica) rotated it first: answer as a retry.
      row = await this.refreshTokens.findById(store.id, row.id);
      if (!row?.spentAt) throw invalid();
    }
    const graceMs = this.config.settings.refreshReuseGraceSeconds * 1000;
    if (graceMs > 0 && row.successorId && now.getTime() - row.spentAt.getTime() <= graceMs) {
      const successor = await this.refreshTokens.findById(store.id, row.successorId);
      if (successor) return { session, tokens: await this.pair(session, successor.id, successor.createdAt, this.successorOf(row, token)) };
    }
    // The session's end and its entry in one transaction.
    await this.sessions.end(store.id, { id: row.sessionId }, (_count, tx) =>
      this.audit.record(
        {
          storeId: store.id,
          action: 'session.refresh.reused',
          outcome: 'failure',
          reason: 'refresh_token_reused',
          actor: { type: 'anonymous', id: null },
          target: { type: 'session', id: row.sessionId },
          details: { userId: row.userId },
        },
        { ...context, sessionId: row.sessionId },
        tx,
      ),
    );
    throw new AppError('RefreshTokenReused', 'this refresh token was already used: the session has ended, log in again');
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

  // An access token, and with refresh tokens on a new refresh token of a new family.
  private async newPair(session: SessionData): Promise<LoginTokens> {
    const now = this.clock.now();
    if (!this.refreshTokensOn) {
      const expiresAt = new Date(session.expiresAt);
      const accessToken = await this.tokens.issue({ sessionId: session.sessionId, userId: session.userId, storeId: session.storeId, use: 'access' }, expiresAt);
      return { accessToken, accessTokenExpiresAt: expiresAt, sessionExpiresAt: expiresAt };
    }
    const refreshToken = randomBytes(32).toString('base64url');
    const row: RefreshTokenEntity = {
      id: randomUUID(),
      storeId: session.storeId,
      userId: session.userId,
      sessionId: session.sessionId,
      tokenHash: sha256(refreshToken),
      familyKey: randomBytes(32).toString('hex'),
      createdAt: now,
      expiresAt: new Date(session.expiresAt),
      spentAt: null,
      successorId: null,
    };
    await this.refreshTokens.insert(row);
    return this.pair(session, row.id, now, refreshToken);
  }

  // The access token that goes with refresh token `jti`, issued at `issuedAt`: the same inputs
  // give the same token, so a retry gets the very pair.
  private async pair(session: SessionData, jti: string, issuedAt: Date, refreshToken: string): Promise<LoginTokens> {
    const sessionExpiresAt = new Date(session.expiresAt);
    // Whole seconds, as the token's `exp`.
    const expiresMs = Math.min(issuedAt.getTime() + this.config.settings.accessTokenMinutes! * 60_000, sessionExpiresAt.getTime());
    const accessTokenExpiresAt = new Date(Math.floor(expiresMs / 1000) * 1000);
    const accessToken = await this.tokens.issue(
      { sessionId: session.sessionId, userId: session.userId, storeId: session.storeId, use: 'access' },
      accessTokenExpiresAt,
      { jti, issuedAt },
    );
    return { accessToken, accessTokenExpiresAt, sessionExpiresAt, refreshToken };
  }

  // The token that replaces `token`: derived, not drawn, so that every replica finds the same.
  private successorOf(row: RefreshTokenEntity, token: string): string {
    return createHmac('sha256', `${row.familyKey}:${this.pepper}`).update(token).digest('base64url');
  }
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

function invalid(): AppError {
  return new AppError('RefreshTokenInvalid', 'unknown, expired or revoked refresh token');
}
