import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { afterCommit, Transactions, type Tx } from '../../platform/database/transactions.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import type { UserEntity } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { SessionCache } from './session-cache.js';
import type { SessionEntity } from './session.entity.js';
import { SessionRepository, type SessionFactorFlag } from './session.repository.js';
import { toSessionResponse } from './session.dto.js';
import type { PendingFactors, SessionData, SessionMeta } from '../../kernel/principal.js';
import { amrOf, type AuthMethod } from '../../kernel/assurance.js';
import { PagingSection } from '../../kernel/paging.settings.js';
import { SessionSection } from './session.settings.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

// The flags each factor clears: the authenticator app and a passkey stand for each other (either
// completes a sign-in that asked for the user's app factor).
const FACTOR_FLAGS: Record<SecondFactor, readonly SessionFactorFlag[]> = {
  email: ['needsEmail2FA'],
  mobile: ['needsMobile2FA'],
  totp: ['needsTotp2FA', 'needsPasskey2FA'],
  passkey: ['needsTotp2FA', 'needsPasskey2FA'],
};

export type SecondFactor = 'email' | 'mobile' | 'totp' | 'passkey';

// How often a session's last use is written, at most.
const SEEN_EVERY_MS = 60_000;

@Injectable()
export class SessionService implements OnModuleDestroy {
  private readonly logger = new Logger('SessionService');
  // When this process last wrote each session's last use (only those written in the last
  // minute: older entries are swept), and the writes still under way.
  private readonly seenWritten = new Map<string, number>();
  private seenSweptAt = 0;
  private readonly seenWrites = new Set<Promise<void>>();

  constructor(
    private readonly sessions: SessionRepository,
    private readonly cache: SessionCache,
    private readonly users: UserService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly events: DomainEvents,
    private readonly transactions: Transactions,
  ) {}

  // `amr`: the methods the sign-in proved (kernel/assurance.ts).
  // `inTx`: written with the session, in its transaction (the sign-in's audit entry); it is told
  // whether the sign-in comes from a new device: none of the user's live sessions has its user
  // agent (a sign-in without a user agent is never called new).
  async create(
    user: UserEntity,
    meta: SessionMeta,
    pending: PendingFactors,
    amr: readonly AuthMethod[],
    inTx?: (session: { id: string; newDevice: boolean }, tx: Tx) => Promise<unknown>,
  ): Promise<SessionData> {
    const now = this.clock.now();
    const fields = {
      id: randomUUID(),
      userId: user.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + (meta.lifetimeMs ?? this.config.section(SessionSection).tokenPeriodInDays * DAY_MS)),
      ip: meta.ip?.slice(0, 64) ?? null,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
      ssoUserId: meta.ssoUserId?.slice(0, 255) ?? null,
      needsEmail2FA: pending.email2FA,
      needsMobile2FA: pending.mobile2FA,
      needsTotp2FA: pending.totp2FA ?? false,
      needsPasskey2FA: pending.passkey2FA ?? false,
      amr: [...amr],
    };
    // One statement: the user's expired rows go as a new one comes (so they never pile up), and
    // the sessions past the cap are named.
    const keep = this.config.section(SessionSection).maxSessionsPerUser;
    const { row, beyond } = inTx
      ? await this.transactions.run(async (tx) => {
          // A sign-in without a user agent is never called new.
          const inserted = await this.sessions.insert(user.storeId, fields, { keep, tx, askKnownDevice: !!fields.userAgent });
          await inTx({ id: inserted.row.id, newDevice: !!fields.userAgent && !inserted.knownDevice }, tx);
          return inserted;
        })
      : await this.sessions.insert(user.storeId, fields, { keep });
    // At the cap the oldest sessions end, so a login always succeeds and forgotten devices go
    // first. Concurrent logins may each end the same old rows; none ends a newer one.
    if (beyond.length) await this.end(user.storeId, { ids: beyond });
    return this.remember(row, user);
  }

  // The live session, from the cache or the database; undefined when it ended, expired or its
  // user was deactivated. Every authenticated request comes here: it marks the session seen.
  async get(storeId: string, sessionId: string): Promise<SessionData | undefined> {
    const now = this.clock.now();
    const cached = await this.cache.get(sessionId);
    if (cached) {
      if (cached.storeId !== storeId || new Date(cached.expiresAt) <= now) return undefined;
      this.touch(storeId, sessionId, now);
      return cached;
    }
    const row = await this.sessions.findById(storeId, sessionId);
    if (!row || row.expiresAt <= now) return undefined;
    const user = await this.users.findById(storeId, row.userId);
    if (!user?.isActive) return undefined;
    this.touch(storeId, sessionId, now);
    return this.remember(row, user);
  }

  // Records the session's last use, at most once a minute per session and process, without
  // the request waiting for it: most requests only read the map. The UPDATE is conditional, so
  // another replica's recent write makes it a no-op. A failure is logged and costs nothing else.
  private touch(storeId: string, sessionId: string, now: Date): void {
    const at = now.getTime();
    const written = this.seenWritten.get(sessionId);
    if (written !== undefined && at - written < SEEN_EVERY_MS) return;
    this.seenWritten.set(sessionId, at);
    if (at - this.seenSweptAt >= SEEN_EVERY_MS) this.sweepSeen(at);
    const write = this.sessions
      .touch(storeId, sessionId, now, new Date(at - SEEN_EVERY_MS))
      .catch((err: unknown) => this.logger.warn({ err, sessionId }, 'could not record when the session was last seen'))
      .finally(() => this.seenWrites.delete(write));
    this.seenWrites.add(write);
  }

  // Entries older than a minute decide nothing: the map holds only sessions used lately.
  private sweepSeen(at: number): void {
    this.seenSweptAt = at;
    for (const [id, written] of this.seenWritten) if (at - written >= SEEN_EVERY_MS) this.seenWritten.delete(id);
  }

  // Writes under way finish before the database pool closes.
  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.seenWrites);
  }

  // One page of the user's live sessions, newest first.
  async list(storeId: string, userId: string, query: PageQuery): Promise<[SessionEntity[], number, PageRequest]> {
    const page = pageRequest(query, this.config.section(PagingSection).paging);
    const [rows, total] = await this.sessions.pageForUser(storeId, userId, this.clock.now(), page);
    return [rows, total, page];
  }

  // How many sessions of the store have not expired (every user's devices, as their lists show them).
  countLive(storeId: string): Promise<number> {
    return this.sessions.countLive(storeId, this.clock.now());
  }

  // Ends sessions everywhere: rows first (with their `session.ended` events, one per user, in the
  // same statement), then every cached copy, then the events are delivered: open event streams
  // of these sessions end on every replica, and the user's other devices are told.
  // `inTx`: written with the end, in its transaction, when any session ended (its audit entry).
  async end(storeId: string, where: { id?: string; ids?: string[]; userId?: string; exceptId?: string }, inTx?: (count: number, tx: Tx) => Promise<unknown>): Promise<number> {
    if (!inTx) {
      const { sessions, events } = await this.sessions.deleteWhere(storeId, where);
      await this.cache.delete(sessions.map((s) => s.id));
      this.events.written(events);
      return sessions.length;
    }
    const ended = await this.transactions.run(async (tx) => {
      const { sessions, events } = await this.sessions.deleteWhere(storeId, where, tx);
      if (sessions.length) await inTx(sessions.length, tx);
      // After the commit, in this order: the cached copies go, then the events are delivered.
      afterCommit(tx, () => this.cache.delete(sessions.map((s) => s.id)));
      this.events.written(events, tx);
      return sessions;
    });
    return ended.length;
  }

  // A second factor proved (`method`, the amr it adds): the row first, then every cached copy,
  // so each replica reads the cleared flags. The session as it is now, or undefined when it has
  // ended meanwhile. `inTx`: written with the change, in its transaction (the factor's audit
  // entry).
  async completeSecondFactor(storeId: string, sessionId: string, factor: SecondFactor, method: AuthMethod, inTx?: (tx: Tx) => Promise<unknown>): Promise<SessionData | undefined> {
    const now = this.clock.now();
    if (inTx) {
      await this.transactions.run(async (tx) => {
        if (await this.sessions.completeFactor(storeId, sessionId, FACTOR_FLAGS[factor], method, now, tx)) await inTx(tx);
      });
    } else {
      await this.sessions.completeFactor(storeId, sessionId, FACTOR_FLAGS[factor], method, now);
    }
    await this.cache.delete([sessionId]);
    return this.get(storeId, sessionId);
  }

  // The spec's session object.
  toResponse(session: SessionData, accessToken?: string, userBucketToken?: string) {
    return toSessionResponse(session, { multipleRoles: this.config.section(TenancySection).usersHaveMultipleRoles }, accessToken, userBucketToken);
  }

  // After a user's name or roles change: cached copies are dropped and rebuilt on next use.
  async forgetCached(storeId: string, userId: string): Promise<void> {
    const rows = await this.sessions.listForUser(storeId, userId);
    await this.cache.delete(rows.map((r) => r.id));
  }

  // A role of `mfaRequiredForRoles` without an app factor (TOTP or passkey).
  private mustEnrol(user: UserEntity): boolean {
    const required = this.config.section(SessionSection).mfaRequiredForRoles;
    // A passkey counts only while passkeys are on: otherwise it cannot be used.
    const passkey = user.hasPasskey && !!this.config.section(SessionSection).webauthn;
    return required.length > 0 && !user.totpEnabled && !passkey && user.roles.some((r) => required.includes(r));
  }

  private async remember(row: SessionEntity, user: UserEntity): Promise<SessionData> {
    const data: SessionData = {
      sessionId: row.id,
      userId: user.id,
      storeId: row.storeId,
      roles: user.roles,
      email: user.email,
      mobile: user.mobile,
      fullname: user.fullname,
      expiresAt: row.expiresAt.toISOString(),
      ...(row.ssoUserId && { ssoUserId: row.ssoUserId }),
      ...(row.needsEmail2FA && { sessionNeedsEmail2FA: true }),
      ...(row.needsMobile2FA && { sessionNeedsMobile2FA: true }),
      ...(row.needsTotp2FA && { sessionNeedsTotp2FA: true }),
      ...(row.needsPasskey2FA && { sessionNeedsPasskey2FA: true }),
      ...(this.mustEnrol(user) && { mfaEnrollmentNeeded: true }),
      amr: amrOf(row.amr ?? []),
      ...(row.authTime && { authTime: row.authTime.toISOString() }),
    };
    await this.cache.set(data.sessionId, data, row.expiresAt.getTime() - this.clock.now().getTime());
    return data;
  }
}
