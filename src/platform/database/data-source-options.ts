import type pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { Init1763800000000 } from './migrations/1763800000000-init.js';
import { SessionsAndKeys1763900000000 } from './migrations/1763900000000-sessions-and-keys.js';
import { Notifications1764000000000 } from './migrations/1764000000000-notifications.js';
import { ApiKeys1764100000000 } from './migrations/1764100000000-api-keys.js';
import { AvatarUploads1764250000000 } from './migrations/1764250000000-avatar-uploads.js';
import { SocialLogin1764320000000 } from './migrations/1764320000000-social-login.js';
import { Verification1764310000000 } from './migrations/1764310000000-verification.js';
import { Access1764400000000 } from './migrations/1764400000000-access.js';
import { StoreChanges1764500000000 } from './migrations/1764500000000-store-changes.js';
import { StorePickerIndex1764600000000 } from './migrations/1764600000000-store-picker-index.js';
import { RefreshTokens1764700000000 } from './migrations/1764700000000-refresh-tokens.js';
import { DeviceSessions1764800000000 } from './migrations/1764800000000-device-sessions.js';
import { AppFactors1764900000000 } from './migrations/1764900000000-app-factors.js';
import { Totp1765000000000 } from './migrations/1765000000000-totp.js';
import { Passkeys1765100000000 } from './migrations/1765100000000-passkeys.js';
import { AuditLog1765200000000 } from './migrations/1765200000000-audit-log.js';
import { PasswordlessLinks1765400000000 } from './migrations/1765400000000-passwordless-links.js';
import { AuditLogActionPrefix1765500000000 } from './migrations/1765500000000-audit-log-action-prefix.js';
import { RefreshTokenSealedSuccessor1765600000000 } from './migrations/1765600000000-refresh-token-sealed-successor.js';
import { RefreshTokenHotSpend1765700000000 } from './migrations/1765700000000-refresh-token-hot-spend.js';
import { AuditChainKeys1765800000000 } from './migrations/1765800000000-audit-chain-keys.js';
import { SessionAssurance1765900000000 } from './migrations/1765900000000-session-assurance.js';
import { DomainEventOutbox1766000000000 } from './migrations/1766000000000-domain-event-outbox.js';
import { Webhooks1766100000000 } from './migrations/1766100000000-webhooks.js';
import { WebhookDeliveryService1766200000000 } from './migrations/1766200000000-webhook-delivery-service.js';
import { OAuthClients1766300000000 } from './migrations/1766300000000-oauth-clients.js';
import { OidcPayload1766400000000 } from './migrations/1766400000000-oidc-payload.js';

export const MIGRATIONS = [Init1763800000000, SessionsAndKeys1763900000000, Notifications1764000000000, ApiKeys1764100000000, AvatarUploads1764250000000, Verification1764310000000, SocialLogin1764320000000, Access1764400000000, StoreChanges1764500000000, StorePickerIndex1764600000000, RefreshTokens1764700000000, DeviceSessions1764800000000, AppFactors1764900000000, Totp1765000000000, Passkeys1765100000000, AuditLog1765200000000, PasswordlessLinks1765400000000, AuditLogActionPrefix1765500000000, RefreshTokenSealedSuccessor1765600000000, RefreshTokenHotSpend1765700000000, AuditChainKeys1765800000000, SessionAssurance1765900000000, DomainEventOutbox1766000000000, Webhooks1766100000000, WebhookDeliveryService1766200000000, OAuthClients1766300000000, OidcPayload1766400000000];

// `entities`: the features' tables (src/entities.ts composes them; the migrations need none).
// `clientClass`: the pool's connections (see DatabaseNotifications). `extraMigrations`: those of
// extensions, run with ours in the order of their timestamps.
export function dataSourceOptions(url: string, entities: DataSourceOptions['entities'] = [], clientClass?: typeof pg.Client, poolSize = 10, extraMigrations: readonly Function[] = []): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations: [...MIGRATIONS, ...extraMigrations],
    migrationsRun: false, // run at boot under a lock: see runMigrations
    synchronize: false,
    uuidExtension: 'pgcrypto',
    // A PostgreSQL that does not answer fails the request (503) instead of holding it for ever.
    extra: { max: poolSize, connectionTimeoutMillis: 3000, ...(clientClass && { Client: clientClass }) },
  };
}
