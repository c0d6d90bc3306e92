import { createTtlCache, TtlCache } from '../../platform/cache/ttl-cache.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { KEY_INVALIDATIONS, REDIS, type OptionalKeyInvalidations, type OptionalRedis } from '../../platform/redis/redis.module.js';
import type { SessionData } from '../../kernel/principal.js';
import { SessionSection } from './session.settings.js';

// Copies of sessions, keyed by session id.
export abstract class SessionCache extends TtlCache<SessionData> {}

export const sessionCacheProvider = {
  provide: SessionCache,
  inject: [AppConfig, REDIS, KEY_INVALIDATIONS],
  useFactory: (config: AppConfig, redis: OptionalRedis, invalidations: OptionalKeyInvalidations) =>
    createTtlCache<SessionData>(config, redis, invalidations, 'session', config.section(SessionSection).sessionCacheSize),
};
