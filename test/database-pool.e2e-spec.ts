import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../src/platform/config/app-config.js';
import { DatabasePool } from '../src/platform/database/database-pool.js';
import { dataSourceOptions } from '../src/platform/database/data-source-options.js';
import { unique, waitFor } from './helpers.js';

// Named statements (DatabasePool.query) on the run's database: PostgreSQL gives each connection a
// session of its own; the embedded database (PGlite) serves every connection from one session.
const URL = process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL!;
const onPostgres = !!process.env.DATABASE_URL;

interface Opened {
  dataSource: DataSource;
  pool: DatabasePool;
}

// A pool of one connection: the statements listed are that connection's session's.
async function open(): Promise<Opened> {
  const dataSource = await new DataSource(dataSourceOptions(URL, [], undefined, 1)).initialize();
  // The server is asked whether it is PGlite, as a service configured with DATABASE_URL does.
  return { dataSource, pool: new DatabasePool(dataSource, { embeddedDatabase: false } as AppConfig) };
}

async function prepared(on: Opened, prefix: string): Promise<string[]> {
  const rows: { name: string }[] = await on.dataSource.query('SELECT "name" FROM pg_prepared_statements WHERE starts_with("name", $1)', [prefix]);
  return rows.map((r) => r.name);
}

describe('DatabasePool.query: named statements', () => {
  let a: Opened;
  let b: Opened;
  beforeAll(async () => {
    [a, b] = await Promise.all([open(), open()]);
  });
  afterAll(async () => {
    await Promise.all([a?.dataSource.destroy(), b?.dataSource.destroy()]);
  });

  it('two connections run the same named statement, each answering its rows; prepared once per connection', async () => {
    const name = unique('probe');
    for (let i = 0; i < 3; i++) {
      for (const on of [a, b]) expect(await on.pool.query<{ n: number }>(name, 'SELECT $1::int + 1 AS n', [i])).toEqual([{ n: i + 1 }]);
    }
    if (onPostgres) {
      expect(await prepared(a, name)).toEqual([name]);
      expect(await prepared(b, name)).toEqual([name]);
    } else {
      // One session: both connections' statements are listed, each under its own connection's tag.
      const names = await prepared(a, name);
      expect(names).toHaveLength(2);
      expect(names.every((n) => n.startsWith(`${name}:`))).toBe(true);
    }
  });

  it('a connection the pool drops leaves none of its statements behind', async () => {
    const name = unique('dropped');
    await a.pool.query(name, 'SELECT 1 AS one', []);
    expect(await prepared(b, name)).toHaveLength(onPostgres ? 0 : 1); // b's session, or the shared one
    const master = (a.dataSource.driver as unknown as { master: { connect(): Promise<{ release(destroy: boolean): void }> } }).master;
    // The pool's one connection: the one that prepared it.
    (await master.connect()).release(true);
    await waitFor('the statement deallocated', async () => ((await prepared(b, name)).length === 0 && (await prepared(a, name)).length === 0) || undefined);
  });
});
