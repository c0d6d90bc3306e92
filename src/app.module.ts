import { Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AccessModule } from './identity/access/access.module.js';
import { AuditModule } from './operations/audit/audit.module.js';
import { AntiBotModule } from './identity/antibot/antibot.module.js';
import { ApiKeyModule } from './identity/apikey/api-key.module.js';
import { AuthModule } from './identity/auth/auth.module.js';
import { M2mModule } from './identity/m2m/m2m.module.js';
import { AvatarModule } from './identity/avatar/avatar.module.js';
import { BucketModule } from './identity/bucket/bucket.module.js';
import type { Clock } from './platform/clock/clock.js';
import { CorsModule } from './kernel/cors.module.js';
import { DomainEventsModule } from './kernel/domain-events.module.js';
import { ErrorFilter } from './kernel/error.filter.js';
import { RouteMethods } from './kernel/route-methods.js';
// Every feature's error codes in the one catalogue the filter answers from (src/errors.ts).
import './errors.js';
import { PolicyAudit } from './kernel/policy-audit.js';
import { loggerOptions, type LogStream } from './platform/logging/logging.js';
import { AppConfig } from './platform/config/app-config.js';
import { BootChecks } from './platform/config/boot-checks.js';
import { ENTITIES } from './entities.js';
import { ExtensionCatalogue } from './kernel/extensions.js';
import { ConfigModule } from './platform/config/config.module.js';
import { DatabaseModule } from './platform/database/database.module.js';
import { EventChannelModule } from './channels/events/event-channel.module.js';
import { HealthModule } from './operations/health/health.module.js';
import { OAuthClientModule } from './identity/oauth-client/oauth-client.module.js';
import { OidcProviderModule } from './identity/oidc-provider/oidc-provider.module.js';
import { MetricsModule } from './operations/metrics/metrics.module.js';
import { NotificationModule } from './delivery/notification/notification.module.js';
import { OverviewModule } from './operations/overview/overview.module.js';
import { PasskeyModule } from './identity/passkey/passkey.module.js';
import { PasswordlessModule } from './identity/passwordless/passwordless.module.js';
import { PasswordPolicyModule } from './identity/password-policy/password-policy.module.js';
import { RateLimitModule } from './kernel/rate-limit/rate-limit.module.js';
import { RecipientsModule } from './identity/recipients/recipients.module.js';
import { RealtimeModule } from './channels/realtime/realtime.module.js';
import { WebhookModule } from './channels/webhooks/webhook.module.js';
import { RedisModule } from './platform/redis/redis.module.js';
import { RegistrationModule } from './identity/registration/registration.module.js';
import { SeedModule } from './identity/seed/seed.module.js';
import { SocialModule } from './identity/social/social.module.js';
import { SsoModule } from './identity/sso/sso.module.js';
import { StoreModule } from './identity/store/store.module.js';
import { TenancyMiddleware } from './identity/tenancy/tenancy.middleware.js';
import { MfaModule } from './identity/mfa/mfa.module.js';
import { UserAdminModule } from './identity/user-admin/user-admin.module.js';
import { VerificationModule } from './identity/verification/verification.module.js';

// The kernel's catalogue of what extensions add, for every feature that keeps a catalogue.
@Module({})
class ExtensionCatalogueModule {
  static forRoot(catalogue: ExtensionCatalogue): DynamicModule {
    return { module: ExtensionCatalogueModule, global: true, providers: [{ provide: ExtensionCatalogue, useValue: catalogue }], exports: [ExtensionCatalogue] };
  }
}

export interface AddedParts {
  imports?: unknown[];
  entities?: Function[];
  migrations?: Function[];
  catalogue?: ExtensionCatalogue;
}

@Module({})
export class AppModule implements OnModuleInit {
  constructor(private readonly checks: BootChecks) {}

  // The root module's init runs after every imported module's: each has reported its settings
  // problems by now, and they stop the boot together, before any onApplicationBootstrap.
  onModuleInit(): void {
    this.checks.assert();
  }

  // `added`: what the composition mounts beyond the service's own modules: the extensions'
  // modules, tables, migrations and catalogue entries (src/extensions.ts), and a test's modules.
  static forRoot(config: AppConfig, databaseUrl: string, clock?: Clock, logStream?: LogStream, added: AddedParts = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        LoggerModule.forRoot(loggerOptions(config, logStream)),
        DatabaseModule.forRoot(databaseUrl, [...ENTITIES, ...(added.entities ?? [])], added.migrations),
        ExtensionCatalogueModule.forRoot(added.catalogue ?? new ExtensionCatalogue()),
        DiscoveryModule,
        CorsModule,
        RedisModule,
        RateLimitModule,
        AuditModule,
        AntiBotModule,
        DomainEventsModule,
        EventChannelModule,
        AvatarModule,
        StoreModule,
        RecipientsModule,
        RegistrationModule,
        PasswordPolicyModule,
        AuthModule,
        PasskeyModule,
        SocialModule,
        SsoModule,
        VerificationModule,
        PasswordlessModule,
        MfaModule,
        UserAdminModule,
        BucketModule,
        NotificationModule,
        RealtimeModule,
        WebhookModule,
        M2mModule,
        ApiKeyModule,
        OAuthClientModule,
        OidcProviderModule,
        SeedModule,
        HealthModule,
        OverviewModule,
        AccessModule,
        ...((added.imports ?? []) as DynamicModule[]),
        MetricsModule,
      ],
      providers: [
        PolicyAudit,
        RouteMethods,
        TenancyMiddleware,
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}
