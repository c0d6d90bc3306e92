import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';

export const REDIS = Symbol('REDIS');
export type OptionalRedis = Redis | null;

export const InjectRedis = () => Inject(REDIS);

// One Redis connection for caches and rate limits when REDIS_URL is set; null otherwise, and
// each user of it falls back to its in-process equivalent.
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: (config: AppConfig): OptionalRedis =>
        config.env.REDIS_URL ? new Redis(config.env.REDIS_URL, { maxRetriesPerRequest: 2, lazyConnect: false }) : null,
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@InjectRedis() private readonly redis: OptionalRedis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}
