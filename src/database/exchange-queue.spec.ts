import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { EmbeddedPostgres } from './embedded-postgres.js';

// Many connections, many parameterised queries at once, against one embedded session: each
// query must come back with its own parameters (with pglite-socket's own queue, Parse and
// Bind messages of different connections interleave and answers get mixed or fail).
// The embedded database as the service runs it: PGlite on its thread, the queue on this one.
describe('embedded database under concurrent connections', () => {
  let db: EmbeddedPostgres;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await EmbeddedPostgres.start(':memory:');
    pool = new pg.Pool({ connectionString: db.url, max: 10 });
    pool.on('error', () => undefined); // an idle client's error must fail the assertions, not the process
  }, 90_000); // without the build's template a fresh PGlite runs initdb: ~15 s on an idle core, more beside other suites

  afterAll(async () => {
    await pool?.end();
    await db?.stop();
  });

  it('answers every parameterised query with its own parameters while transactions run', async () => {
    await pool.query('CREATE TABLE written (n int)');
    // Transactions and plain queries at once (replicas booting, requests while a registration
    // commits). Each query's text differs, so a Bind landing on another connection's Parse
    // shows as a wrong answer or an error.
    const results = await Promise.allSettled(
      Array.from({ length: 240 }, async (_, i) => {
        if (i % 3 === 0) {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            await client.query('INSERT INTO written VALUES ($1)', [i]);
            await client.query('SELECT pg_advisory_xact_lock($1)', [1]);
            await client.query('COMMIT');
          } finally {
            client.release();
          }
          return [i, 'tx'];
        }
        const { rows } = await pool.query<{ v: number; t: string }>(`SELECT $1::int AS v, 'text ${i}'::text AS t`, [i]);
        return [rows[0].v, rows[0].t];
      }),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(results.map((r) => (r as PromiseFulfilledResult<unknown>).value)).toEqual(
      Array.from({ length: 240 }, (_, i) => (i % 3 === 0 ? [i, 'tx'] : [i, `text ${i}`])),
    );
    expect(Number((await pool.query<{ c: string }>('SELECT count(*) AS c FROM written')).rows[0].c)).toBe(80);
  });

  it('keeps a transaction to its connection; another connection waits for it, then sees its rows', async () => {
    await pool.query('CREATE TABLE t (n int)');
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('INSERT INTO t VALUES ($1)', [1]);
      // One session: a query from another connection cannot run inside this transaction.
      const outside = pool.query<{ c: string }>('SELECT count(*) AS c FROM t');
      await tx.query('INSERT INTO t VALUES ($1)', [2]);
      await tx.query('COMMIT');
      expect(Number((await outside).rows[0].c)).toBe(2);
    } finally {
      tx.release();
    }
    expect(Number((await pool.query<{ c: string }>('SELECT count(*) AS c FROM t')).rows[0].c)).toBe(2);
  });

  it('rolls back the transaction of a connection that goes away mid-way; the others go on', async () => {
    await pool.query('CREATE TABLE dropped (n int)');
    const lost = new pg.Client(db.url);
    lost.on('error', () => undefined);
    await lost.connect();
    await lost.query('BEGIN');
    await lost.query('INSERT INTO dropped VALUES ($1)', [1]);
    (lost as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const { rows } = await pool.query<{ c: string }>('SELECT count(*) AS c FROM dropped');
    expect(Number(rows[0].c)).toBe(0);
    await pool.query('INSERT INTO dropped VALUES ($1)', [2]);
    expect(Number((await pool.query<{ c: string }>('SELECT count(*) AS c FROM dropped')).rows[0].c)).toBe(1);
  });
});
