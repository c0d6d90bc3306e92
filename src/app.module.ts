import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AccessModule } from './access/access.module.js';
import { AntiBotModule } from './antibot/antibot.module.js';
import { ApiKeyModule } from './apikey/api-key.module.js';
import { AuthModule } from './auth/auth.module.js';
import { M2mModule } from './m2m/m2m.module.js';
import { AvatarModule } from './avatar/avatar.module.js';
import { BucketModule } from './bucket/bucket.module.js';
import type { Clock } from './clock/clock.js';
import { ErrorFilter } from './common/error.filter.js';
import { PolicyAudit } from './common/policy-audit.js';
import { loggerOptions, type LogStream } from './common/logging.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EventChannelModule } from './events/event-channel.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { NotificationModule } from './notification/notification.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { RealtimeModule } from './realtime/realtime.module.js';
import { RedisModule } from './redis/redis.module.js';
import { RegistrationModule } from './registration/registration.module.js';
import { SeedModule } from './seed/seed.module.js';
import { SocialModule } from './social/social.module.js';
import { SsoModule } from './sso/sso.module.js';
import { StoreModule } from './store/store.module.js';
import { TenancyMiddleware } from './tenancy/tenancy.middleware.js';
import { UserAdminModule } from './user-admin/user-admin.module.js';
import { VerificationModule } from './verification/verification.module.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, databaseUrl: string, clock?: Clock, logStream?: LogStream, extra: unknown[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        LoggerModule.forRoot(loggerOptions(config, logStream)),
        DatabaseModule.forRoot(databaseUrl),
        DiscoveryModule,
        RedisModule,
        RateLimitModule,
        AntiBotModule,
        EventsModule,
        EventChannelModule,
        AvatarModule,
        StoreModule,
        RegistrationModule,
        AuthModule,
        SocialModule,
        SsoModule,
        VerificationModule,
        UserAdminModule,
        BucketModule,
        NotificationModule,
        RealtimeModule,
        M2mModule,
        ApiKeyModule,
        SeedModule,
        HealthModule,
        AccessModule,
        ...(extra as DynamicModule[]),
        MetricsModule,
      ],
      providers: [
        PolicyAudit,
        TenancyMiddleware,
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}
