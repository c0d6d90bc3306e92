import { Module, RequestMethod, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { ApiKeyModule } from './apikey/api-key.module.js';
import { AuthModule } from './auth/auth.module.js';
import { M2mModule } from './m2m/m2m.module.js';
import { AvatarModule } from './avatar/avatar.module.js';
import { BucketModule } from './bucket/bucket.module.js';
import type { Clock } from './clock/clock.js';
import { EnvelopeInterceptor } from './common/envelope.js';
import { ErrorFilter } from './common/error.filter.js';
import { jsonBody } from './common/http-middleware.js';
import { PolicyAudit } from './common/policy-audit.js';
import { loggerOptions } from './common/logging.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { NotificationModule } from './notification/notification.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { RedisModule } from './redis/redis.module.js';
import { RegistrationModule } from './registration/registration.module.js';
import { SeedModule } from './seed/seed.module.js';
import { StoreModule } from './store/store.module.js';
import { TenancyMiddleware } from './tenancy/tenancy.middleware.js';
import { UserAdminModule } from './user-admin/user-admin.module.js';

@Module({})
export class AppModule implements NestModule {
  static forRoot(config: AppConfig, databaseUrl: string, clock?: Clock): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        LoggerModule.forRoot(loggerOptions(config)),
        DatabaseModule.forRoot(databaseUrl),
        DiscoveryModule,
        RedisModule,
        RateLimitModule,
        EventsModule,
        AvatarModule,
        StoreModule,
        RegistrationModule,
        AuthModule,
        UserAdminModule,
        BucketModule,
        NotificationModule,
        M2mModule,
        ApiKeyModule,
        SeedModule,
        HealthModule,
      ],
      providers: [
        PolicyAudit,
        { provide: APP_FILTER, useClass: ErrorFilter },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
      ],
    };
  }

  // After the logger's middleware (so every request is logged with its id): JSON bodies, then
  // the tenant.
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(jsonBody(), TenancyMiddleware).forRoutes({ path: '{*splat}', method: RequestMethod.ALL });
  }
}
