import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type Socket } from 'node:net';
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

  it('ends the exchange of a connection that goes away before its Sync; the next connection gets its own answers', async () => {
    // A failing query sent without its Sync: the session skips messages until a Sync, and the
    // answers held for that exchange must not reach anyone else.
    const [host, port] = db.url.replace(/^.*@/, '').replace(/\/.*$/, '').split(':');
    const socket = connect(Number(port), host);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(startup({ user: 'postgres', database: 'postgres' }));
    await readUntilReady(socket);
    socket.write(Buffer.concat([message('P', cstring(''), cstring('SELECT 1/0'), int16(0)), message('B', cstring(''), cstring(''), int16(0), int16(0), int16(0)), message('E', cstring(''), int32(0))]));
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    const { rows } = await pool.query<{ n: number }>('SELECT $1::int AS n', [2]);
    expect(rows).toEqual([{ n: 2 }]);
  });
});

// The wire protocol's framing, for a client that stops half-way (pg cannot).
function message(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
}
function startup(params: Record<string, string>): Buffer {
  const body = Buffer.concat([int32(196608), ...Object.entries(params).flatMap(([k, v]) => [cstring(k), cstring(v)]), Buffer.from([0])]);
  return Buffer.concat([int32(body.length + 4), body]);
}
function cstring(text: string): Buffer {
  return Buffer.from(`${text}\0`);
}
function int16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
}
function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
// Reads until ReadyForQuery ('Z'), the end of the startup's answers.
function readUntilReady(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    let seen = Buffer.alloc(0);
    const onData = (data: Buffer) => {
      seen = Buffer.concat([seen, data]);
      for (let at = 0; at + 5 <= seen.length; at += 1 + seen.readInt32BE(at + 1)) {
        if (seen[at] === 0x5a) {
          socket.off('data', onData);
          resolve();
          return;
        }
      }
    };
    socket.on('data', onData);
  });
}
