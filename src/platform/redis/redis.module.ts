import { Global, Inject, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { closeRedis } from './close-redis.js';
import { RedisKeyInvalidations } from './key-invalidations.js';

export const REDIS = Symbol('REDIS');
export type OptionalRedis = Redis | null;
// Redis's announcements of changed keys, for copies kept in process; null without Redis.
export const KEY_INVALIDATIONS = Symbol('KEY_INVALIDATIONS');
export type OptionalKeyInvalidations = RedisKeyInvalidations | null;

export const InjectRedis = () => Inject(REDIS);

// While Redis is down a command fails within about two seconds (the caller answers 503) instead
// of waiting for the outage to end; reconnection is retried every second at most, so service
// resumes within a second of Redis coming back.
export const REDIS_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 1,
  retryStrategy: (times) => Math.min(times * 50, 1000),
  commandTimeout: 2000,
  // Commands issued in the same tick (concurrent requests' session and key lookups) leave in
  // one write: a socket write per command was 7 % of an authenticated request's CPU.
  enableAutoPipelining: true,
};

// Connections that were lost and are not ready again. ioredis holds a command sent meanwhile
// until it reconnects and runs it then, even after its caller gave up (commandTimeout): a
// counter must not wait there (see RateLimits).
const lost = new WeakSet<Redis>();
export const isRedisLost = (redis: Redis): boolean => lost.has(redis);

// Reports an outage once (not once per reconnection attempt) and its end. Without an 'error'
// listener ioredis prints "Unhandled error event" for every failed attempt. The message names
// the error's code only: the URL may carry a password.
export function watchRedis(redis: Redis, logger: Logger): Redis {
  let down = false;
  redis.on('close', () => lost.add(redis));
  redis.on('error', (error: Error & { code?: string }) => {
    if (down) return;
    down = true;
    logger.warn(`Redis unavailable (${error.code ?? error.name}); retrying`);
  });
  redis.on('ready', () => {
    lost.delete(redis);
    if (!down) return;
    down = false;
    logger.log('Redis available again');
  });
  return redis;
}

// One Redis connection for caches and rate limits when REDIS_URL is set; null otherwise, and
// each user of it falls back to its in-process equivalent.
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: (config: AppConfig): OptionalRedis =>
        config.env.REDIS_URL ? watchRedis(new Redis(config.env.REDIS_URL, REDIS_OPTIONS), new Logger('Redis')) : null,
    },
    {
      provide: KEY_INVALIDATIONS,
      inject: [AppConfig, REDIS],
      useFactory: (config: AppConfig, redis: OptionalRedis): OptionalKeyInvalidations =>
        config.env.REDIS_URL && redis ? new RedisKeyInvalidations(config.env.REDIS_URL, REDIS_OPTIONS, redis) : null,
    },
  ],
  exports: [REDIS, KEY_INVALIDATIONS],
})
export class RedisModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @InjectRedis() private readonly redis: OptionalRedis,
    @Inject(KEY_INVALIDATIONS) private readonly invalidations: OptionalKeyInvalidations,
  ) {}

  // Every cache has subscribed by now (they do so when built).
  onApplicationBootstrap(): void {
    this.invalidations?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.invalidations?.close();
    if (this.redis) await closeRedis(this.redis);
  }
}
