// Data source for the TypeORM migration CLI (`npm run migration:run`); needs DATABASE_URL.
// The service itself runs migrations at boot (src/platform/database/migrate.ts).
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/platform/database/data-source-options.js';
import { ENTITIES } from './src/entities.js';
import { loadEnv } from './src/platform/config/env.js';

const { DATABASE_URL } = loadEnv(process.env);
if (!DATABASE_URL) throw new Error('DATABASE_URL is required for the migration CLI');

export default new DataSource(dataSourceOptions(DATABASE_URL, ENTITIES));
