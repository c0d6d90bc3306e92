// One store with a large audit log, filled by SQL, for `bench:growth` (paging) and
// `bench:audit-export` (streaming). The store `audit-bench` and its owner are added by SQL like
// the growth bench's stores; its entries by generate_series, with the columns and constraints of
// migration 1765200000000 (`seq` continues the store's, one per entry, `at` in whole
// milliseconds as the service's clock writes it). The chain is NOT valid: `prevHash`/`hash` are
// filler of the right shape (the verify route would stop at the first filled entry), which
// neither paging nor export reads.
import bcrypt from 'bcrypt';
import type pg from 'pg';

export const AUDIT_STORE = 'audit-bench';
export const AUDIT_OWNER = 'owner@audit-bench.test';
export const AUDIT_PASSWORD = 'audit bench password';
export const HEADER = 'svc-store-codename';
// One actor's entries: 10 in a row every 1,000 (100 actors; failed logins have none), 8 in 1,000.
export const BENCH_ACTOR = actorId(7);

function actorId(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

// The store and its owner (tenantOwner), once; its id.
export async function auditStore(db: pg.Client): Promise<string> {
  const found = await db.query(`SELECT id FROM stores WHERE codename = $1`, [AUDIT_STORE]);
  if (found.rows.length) return found.rows[0].id as string;
  const hash = await bcrypt.hash(AUDIT_PASSWORD, Number(process.env.BCRYPT_COST ?? 10));
  const { rows } = await db.query(
    `WITH s AS (
       INSERT INTO stores (codename, name, fullname, avatar, "ownerId") VALUES ($1, 'Audit bench', 'Audit bench store', 'https://example.test/a.png', NULL) RETURNING id)
     INSERT INTO users ("storeId", email, fullname, "passwordHash", avatar, roles, "emailVerified")
     SELECT id, $2, 'Audit bench owner', $3, 'https://example.test/a.png', ARRAY['tenantOwner'], true FROM s RETURNING "storeId"`,
    [AUDIT_STORE, AUDIT_OWNER, hash],
  );
  return rows[0].storeId as string;
}

// Brings the store's filled entries to `size` (adds the newest, or removes the newest filled ones
// past it), then VACUUM ANALYZE as autovacuum would have done on a table that grew that far.
// Entries the service wrote itself (the bench's logins) stay. Mix per 10 entries: 5
// user.login.succeeded, 2 user.login.failed (anonymous, a keyed-hash identifier), 1 user.logout,
// 1 user.updated, 1 apikey.created; 1 ms apart, the newest a month ago (inside the retention).
export async function fillAudit(db: pg.Client, storeId: string, size: number, log: (s: string) => void = () => {}): Promise<void> {
  const filled = `"storeId" = $1 AND "requestId" LIKE 'bench-%'`;
  const { rows } = await db.query(`SELECT count(*)::int AS n, coalesce(max(seq), 0)::bigint AS seq FROM audit_log WHERE "storeId" = $1`, [storeId]);
  const { rows: mine } = await db.query(`SELECT count(*)::int AS n FROM audit_log WHERE ${filled}`, [storeId]);
  let have = mine[0].n as number;
  if (have > size) {
    await db.query(`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE ${filled} ORDER BY at DESC LIMIT $2)`, [storeId, have - size]);
    have = size;
  }
  let seq = Number(rows[0].seq);
  const t0 = performance.now();
  for (let start = have + 1; start <= size; start += 100_000) {
    const end = Math.min(size, start + 99_999);
    await db.query(
      `INSERT INTO audit_log (id, "storeId", seq, at, action, outcome, reason, "actorType", "actorId", "actorRoleId", "targetType", "targetId", ip, "userAgent", "requestId", "sessionId", details, "prevHash", hash)
       SELECT gen_random_uuid(), $1, $4::bigint + i - $2::int + 1,
              date_trunc('day', now()) - interval '30 days' - interval '1000000 milliseconds' + i * interval '1 millisecond',
              (ARRAY['user.login.succeeded','user.login.succeeded','user.login.succeeded','user.login.succeeded','user.login.succeeded',
                     'user.login.failed','user.login.failed','user.logout','user.updated','apikey.created'])[i % 10 + 1],
              CASE WHEN i % 10 IN (5, 6) THEN 'failure' ELSE 'success' END,
              CASE WHEN i % 10 IN (5, 6) THEN 'wrong_password' END,
              CASE WHEN i % 10 IN (5, 6) THEN 'anonymous' ELSE 'user' END,
              CASE WHEN i % 10 NOT IN (5, 6) THEN '00000000-0000-4000-8000-' || lpad(((i / 10) % 100)::text, 12, '0') END,
              CASE WHEN i % 10 NOT IN (5, 6) THEN 'tenantOwner' END,
              CASE WHEN i % 10 = 9 THEN 'apiKey' ELSE 'user' END,
              '00000000-0000-4000-8000-' || lpad(((i / 10) % 100)::text, 12, '0'),
              '10.0.' || (i / 256 % 256) || '.' || (i % 256),
              'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
              'bench-' || i,
              CASE WHEN i % 10 NOT IN (5, 6) THEN md5('session' || (i / 10))::uuid::text END,
              CASE WHEN i % 10 IN (5, 6) THEN jsonb_build_object('identifierHash', md5('id' || i) || md5('x' || i))
                   WHEN i % 10 = 8 THEN jsonb_build_object('fields', jsonb_build_array('fullname')) END,
              md5('p' || i) || md5('q' || i), md5('h' || i) || md5('k' || i)
       FROM generate_series($2::int, $3::int) AS i`,
      [storeId, start, end, seq],
    );
    seq += end - start + 1;
    log(`filled ${end.toLocaleString('en')} entries (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  await db.query('VACUUM ANALYZE audit_log');
}

// An `after=` cursor as the service builds it (src/operations/audit/audit.controller.ts:
// base64url of JSON [at, id, next page number]) for the entry `depth` deep, newest first, among
// those matching `where` (SQL on the store's rows; found by SQL, since walking to 900,000 deep a
// page at a time would take most of the bench).
export async function cursorAt(db: pg.Client, storeId: string, where: string, params: unknown[], depth: number, pageRows: number): Promise<string> {
  const { rows } = await db.query(
    `SELECT at, id FROM audit_log WHERE "storeId" = $1 AND ${where} ORDER BY at DESC, id DESC OFFSET ${depth - 1} LIMIT 1`,
    [storeId, ...params],
  );
  if (!rows.length) throw new Error(`no entry ${depth} deep where ${where}`);
  const page = Math.max(2, Math.floor(depth / pageRows) + 1); // the service's cursors start at page 2
  return Buffer.from(JSON.stringify([(rows[0].at as Date).toISOString(), rows[0].id, page])).toString('base64url');
}
