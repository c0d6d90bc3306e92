import { LRUCache } from 'lru-cache';
import { AppConfig } from '../config/app-config.js';
import { REDIS, type OptionalRedis } from '../redis/redis.module.js';
import type { SessionData } from './session.types.js';

// Port: copies of sessions, in Redis when configured (shared by every replica, so a logout
// on one is seen by all), otherwise in a bounded in-process LRU.
export abstract class SessionCache {
  abstract get(id: string): Promise<SessionData | undefined>;
  abstract set(data: SessionData, ttlMs: number): Promise<void>;
  abstract delete(ids: string[]): Promise<void>;
}

export class LruSessionCache extends SessionCache {
  private readonly lru: LRUCache<string, SessionData>;

  constructor(max: number) {
    super();
    this.lru = new LRUCache({ max });
  }

  async get(id: string) {
    return this.lru.get(id);
  }

  async set(data: SessionData, ttlMs: number) {
    this.lru.set(data.sessionId, data, { ttl: ttlMs });
  }

  async delete(ids: string[]) {
    for (const id of ids) this.lru.delete(id);
  }
}

export class RedisSessionCache extends SessionCache {
  constructor(
    private readonly redis: NonNullable<OptionalRedis>,
    private readonly prefix: string,
  ) {
    super();
  }

  async get(id: string) {
    const raw = await this.redis.get(this.prefix + id);
    return raw ? (JSON.parse(raw) as SessionData) : undefined;
  }

  async set(data: SessionData, ttlMs: number) {
    await this.redis.set(this.prefix + data.sessionId, JSON.stringify(data), 'PX', Math.max(1, Math.floor(ttlMs)));
  }

  async delete(ids: string[]) {
    if (ids.length) await this.redis.del(...ids.map((id) => this.prefix + id));
  }
}

export const sessionCacheProvider = {
  provide: SessionCache,
  inject: [AppConfig, REDIS],
  useFactory: (config: AppConfig, redis: OptionalRedis): SessionCache => {
    const { PROJECT_CODENAME, SERVICE_CODENAME } = config.env;
    return redis
      ? new RedisSessionCache(redis, `${PROJECT_CODENAME}:${SERVICE_CODENAME}:session:`)
      : new LruSessionCache(config.settings.sessionCacheSize);
  },
};
