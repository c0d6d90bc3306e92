import { createTtlCache, TtlCache } from '../cache/ttl-cache.js';
import { AppConfig } from '../config/app-config.js';
import { REDIS, type OptionalRedis } from '../redis/redis.module.js';
import type { SessionData } from './session.types.js';

// Copies of sessions, keyed by session id.
export abstract class SessionCache extends TtlCache<SessionData> {}

export const sessionCacheProvider = {
  provide: SessionCache,
  inject: [AppConfig, REDIS],
  useFactory: (config: AppConfig, redis: OptionalRedis) => createTtlCache<SessionData>(config, redis, 'session'),
};
