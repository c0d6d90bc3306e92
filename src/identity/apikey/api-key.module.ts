import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { createTtlCache } from '../../platform/cache/ttl-cache.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { KEY_INVALIDATIONS, REDIS, type OptionalKeyInvalidations, type OptionalRedis } from '../../platform/redis/redis.module.js';
import { UserModule } from '../user/user.module.js';
import { ApiKeyController } from './api-key.controller.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { API_KEY_CACHE, ApiKeyService } from './api-key.service.js';
import { SessionSection } from '../session/session.settings.js';

@Module({
  imports: [UserModule, AccessModule],
  controllers: [ApiKeyController],
  providers: [
    ApiKeyRepository,
    ApiKeyService,
    {
      provide: API_KEY_CACHE,
      inject: [AppConfig, REDIS, KEY_INVALIDATIONS],
      useFactory: (config: AppConfig, redis: OptionalRedis, invalidations: OptionalKeyInvalidations) => createTtlCache(config, redis, invalidations, 'apikey', config.section(SessionSection).sessionCacheSize),
    },
  ],
  exports: [ApiKeyService],
})
export class ApiKeyModule {}
