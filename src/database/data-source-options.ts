import type { DataSourceOptions } from 'typeorm';
import { SigningKeyEntity } from '../auth/signing-key.entity.js';
import { SessionEntity } from '../session/session.entity.js';
import { StoreEntity } from '../store/store.entity.js';
import { UserEntity } from '../user/user.entity.js';
import { Init1763800000000 } from './migrations/1763800000000-init.js';
import { SessionsAndKeys1763900000000 } from './migrations/1763900000000-sessions-and-keys.js';
import { Notifications1764000000000 } from './migrations/1764000000000-notifications.js';
import { ApiKeys1764100000000 } from './migrations/1764100000000-api-keys.js';
import { ApiKeyEntity } from '../apikey/api-key.entity.js';
import { NotificationEntity } from '../notification/notification.entity.js';

export const ENTITIES = [StoreEntity, UserEntity, SessionEntity, SigningKeyEntity, NotificationEntity, ApiKeyEntity];
export const MIGRATIONS = [Init1763800000000, SessionsAndKeys1763900000000, Notifications1764000000000, ApiKeys1764100000000];

export function dataSourceOptions(url: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: false, // run at boot under a lock: see runMigrations
    synchronize: false,
    uuidExtension: 'pgcrypto',
    extra: { max: poolSize },
  };
}
