import type { DataSourceOptions } from 'typeorm';
import { StoreEntity } from '../store/store.entity.js';
import { UserEntity } from '../user/user.entity.js';
import { Init1763800000000 } from './migrations/1763800000000-init.js';

export const ENTITIES = [StoreEntity, UserEntity];
export const MIGRATIONS = [Init1763800000000];

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
