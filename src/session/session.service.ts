import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock, DAY_MS } from '../clock/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { UserEntity } from '../user/user.entity.js';
import { UserService } from '../user/user.service.js';
import { SessionCache } from './session-cache.js';
import type { SessionEntity } from './session.entity.js';
import { SessionRepository } from './session.repository.js';
import type { SessionData, SessionMeta } from './session.types.js';

@Injectable()
export class SessionService {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly cache: SessionCache,
    private readonly users: UserService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async create(user: UserEntity, meta: SessionMeta): Promise<SessionData> {
    const now = this.clock.now();
    // Expired rows of this user go as a new one comes, so they never pile up.
    await this.sessions.deleteExpired(user.storeId, user.id, now);
    const row = await this.sessions.insert(user.storeId, {
      id: randomUUID(),
      userId: user.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.config.settings.tokenPeriodInDays * DAY_MS),
      ip: meta.ip?.slice(0, 64) ?? null,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
    });
    return this.remember(row, user);
  }

  // The live session, from the cache or the database; undefined when it ended, expired or its
  // user was deactivated.
  async get(storeId: string, sessionId: string): Promise<SessionData | undefined> {
    const now = this.clock.now();
    const cached = await this.cache.get(sessionId);
    if (cached) return cached.storeId === storeId && new Date(cached.expiresAt) > now ? cached : undefined;
    const row = await this.sessions.findById(storeId, sessionId);
    if (!row || row.expiresAt <= now) return undefined;
    const user = await this.users.findById(storeId, row.userId);
    if (!user?.isActive) return undefined;
    return this.remember(row, user);
  }

  list(storeId: string, userId: string): Promise<SessionEntity[]> {
    return this.sessions.listForUser(storeId, userId, this.clock.now());
  }

  // Ends sessions everywhere: rows first, then every cached copy.
  async end(storeId: string, where: { id?: string; userId?: string; exceptId?: string }): Promise<number> {
    const ids = await this.sessions.deleteWhere(storeId, where);
    await this.cache.delete(ids);
    return ids.length;
  }

  // After a user's name or roles change: cached copies are dropped and rebuilt on next use.
  async forgetCached(storeId: string, userId: string): Promise<void> {
    const rows = await this.sessions.listForUser(storeId, userId);
    await this.cache.delete(rows.map((r) => r.id));
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
    };
    await this.cache.set(data.sessionId, data, row.expiresAt.getTime() - this.clock.now().getTime());
    return data;
  }
}
