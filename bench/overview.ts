// The console's overview (`GET /auth-api/v1/overview`) as one store's audit log grows.
//
//   DATABASE_URL=postgres://…/<a database for this bench only> npm run bench:overview
//
// One store (`overview-bench`, added by SQL with its owner) gets its log filled by SQL to each of
// OVERVIEW_SIZES (10,000, 100,000, 1,000,000 entries) spread evenly over the last 7 days, with the
// audit fill's mix (per 10 entries: 5 user.login.succeeded, 2 user.login.failed, 1 each
// user.logout, user.updated, apikey.created), then vacuumed and analysed as autovacuum would.
// For each size: the p50 of 50 sequential overview requests as the store's owner on a warm
// service, and the plan of the sign-in count (EXPLAIN ANALYZE of the service's own statement,
// COUNT_PER_PERIOD_SQL, over the 7 days): its scan, index and time. The answer's sums are
// checked against a count by SQL.
import bcrypt from 'bcrypt';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../src/app.js';
import { COUNT_PER_PERIOD_SQL } from '../src/operations/audit/audit.repository.js';
import { median } from './process-stats.js';

const STORE = 'overview-bench';
const OWNER = 'owner@overview-bench.test';
const PASSWORD = 'overview bench password';
const HEADER = 'svc-store-codename';
const DAY_MS = 86_400_000;
const SIZES = (process.env.OVERVIEW_SIZES ?? '10000,100000,1000000').split(',').map(Number).filter((n) => n > 0);
const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('bench:overview needs DATABASE_URL: a PostgreSQL database for this bench only (it adds up to 1,000,000 audit entries)\n');
  process.exit(1);
}

async function benchStore(db: pg.Client): Promise<string> {
  const found = await db.query(`SELECT id FROM stores WHERE codename = $1`, [STORE]);
  if (found.rows.length) return found.rows[0].id as string;
  const hash = await bcrypt.hash(PASSWORD, Number(process.env.BCRYPT_COST ?? 10));
  const { rows } = await db.query(
    `WITH s AS (
       INSERT INTO stores (codename, name, fullname, avatar, "ownerId") VALUES ($1, 'Overview bench', 'Overview bench store', 'https://example.test/a.png', NULL) RETURNING id)
     INSERT INTO users ("storeId", email, fullname, "passwordHash", avatar, roles, "emailVerified")
     SELECT id, $2, 'Overview bench owner', $3, 'https://example.test/a.png', ARRAY['tenantOwner'], true FROM s RETURNING "storeId"`,
    [STORE, OWNER, hash],
  );
  return rows[0].storeId as string;
}

// The store's filled entries replaced by `size` new ones over the 7 days before now.
async function fill(db: pg.Client, storeId: string, size: number): Promise<void> {
  await db.query(`DELETE FROM audit_log WHERE "storeId" = $1 AND "requestId" LIKE 'bench-%'`, [storeId]);
  const { rows } = await db.query(`SELECT coalesce(max(seq), 0)::bigint AS seq FROM audit_log WHERE "storeId" = $1`, [storeId]);
  const t0 = performance.now();
  for (let start = 1; start <= size; start += 100_000) {
    const end = Math.min(size, start + 99_999);
    await db.query(
      `INSERT INTO audit_log (id, "storeId", seq, at, action, outcome, reason, "actorType", "actorId", "requestId", hash)
       SELECT gen_random_uuid(), $1, $4::bigint + i, now() - (i::float8 / $5::int) * interval '7 days',
              (ARRAY['user.login.succeeded','user.login.succeeded','user.login.succeeded','user.login.succeeded','user.login.succeeded',
                     'user.login.failed','user.login.failed','user.logout','user.updated','apikey.created'])[i % 10 + 1],
              CASE WHEN i % 10 IN (5, 6) THEN 'failure' ELSE 'success' END,
              CASE WHEN i % 10 IN (5, 6) THEN 'wrong_password' END,
              CASE WHEN i % 10 IN (5, 6) THEN 'anonymous' ELSE 'user' END,
              CASE WHEN i % 10 NOT IN (5, 6) THEN '00000000-0000-4000-8000-' || lpad(((i / 10) % 100)::text, 12, '0') END,
              'bench-' || i, md5('h' || i) || md5('k' || i)
       FROM generate_series($2::int, $3::int) AS i`,
      [storeId, start, end, rows[0].seq, size],
    );
    process.stderr.write(`filled ${end.toLocaleString('en')} entries (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  await db.query('VACUUM ANALYZE audit_log');
}

interface Plan {
  'Node Type': string;
  'Index Name'?: string;
  'Heap Fetches'?: number;
  'Actual Rows'?: number;
  Plans?: Plan[];
}

// The scans of a plan, depth first.
function scans(plan: Plan): Plan[] {
  return [...(/Scan/.test(plan['Node Type']) ? [plan] : []), ...(plan.Plans ?? []).flatMap(scans)];
}

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const running = await createApp({
    env: { NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:3000', DATABASE_URL: url, BCRYPT_COST: process.env.BCRYPT_COST ?? '10', LOG_LEVEL: 'warn', SUPER_ADMIN_PASSWORD: 'overview-bench-admin-password' },
    settings: { rateLimits: { loginPerIp: { points: 1_000_000, durationSeconds: 1 }, loginPerUsername: { points: 1_000_000, durationSeconds: 1 } } },
  });
  await running.app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(running.app.getHttpServer().address() as AddressInfo).port}`;
  const table: string[] = [];
  try {
    const storeId = await benchStore(db);
    for (const size of SIZES) {
      await fill(db, storeId, size);
      const res = await fetch(`${base}/auth-api/login`, { method: 'POST', headers: { 'content-type': 'application/json', [HEADER]: STORE }, body: JSON.stringify({ username: OWNER, password: PASSWORD }) });
      if (!res.ok) throw new Error(`login: ${res.status} ${await res.text()}`);
      const headers = { [HEADER]: STORE, authorization: `Bearer ${((await res.json()) as { accessToken: string }).accessToken}` };
      await new Promise((resolve) => setTimeout(resolve, 1000)); // the login's entry is written in the next batch
      const overview = async () => {
        const r = await fetch(`${base}/auth-api/v1/overview`, { headers });
        if (!r.ok) throw new Error(`overview: ${r.status} ${await r.text()}`);
        return (await r.json()) as { signIns: { last7d: { succeeded: number; failed: number }[] } };
      };
      // The answer's 7 days against a count by SQL (from the first day's start).
      const answer = await overview();
      const dayStart = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - 6 * DAY_MS);
      const { rows } = await db.query(`SELECT count(*) FILTER (WHERE action = 'user.login.succeeded')::int AS s, count(*) FILTER (WHERE action = 'user.login.failed')::int AS f FROM audit_log WHERE "storeId" = $1 AND at >= $2`, [storeId, dayStart]);
      const sums = answer.signIns.last7d.reduce((acc, b) => ({ s: acc.s + b.succeeded, f: acc.f + b.failed }), { s: 0, f: 0 });
      if (sums.s !== rows[0].s || sums.f !== rows[0].f) throw new Error(`the overview counted ${JSON.stringify(sums)}, SQL ${JSON.stringify(rows[0])}`);
      for (let i = 0; i < 10; i++) await overview(); // warm
      const times: number[] = [];
      for (let i = 0; i < 50; i++) {
        const t0 = performance.now();
        await overview();
        times.push(performance.now() - t0);
      }
      const now = Date.now();
      const explain = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${COUNT_PER_PERIOD_SQL}`, [storeId, ['user.login.succeeded', 'user.login.failed'], dayStart, new Date(now + DAY_MS), 'day']);
      const [{ Plan: plan, 'Execution Time': ms }] = explain.rows[0]['QUERY PLAN'] as { Plan: Plan; 'Execution Time': number }[];
      const scan = scans(plan).map((s) => `${s['Node Type']} on ${s['Index Name'] ?? 'audit_log'} (${s['Actual Rows']} rows, ${s['Heap Fetches'] ?? 0} heap fetches)`).join('; ');
      table.push(`| ${size.toLocaleString('en')} | ${(sums.s + sums.f).toLocaleString('en')} | ${median(times).toFixed(1)} ms | ${ms.toFixed(1)} ms | ${scan} |`);
      process.stdout.write(`${table.at(-1)}\n`);
    }
  } finally {
    await running.close();
    await db.end();
  }
  process.stdout.write(`\n| entries in 7 days | sign-ins counted (7 d) | overview p50 | sign-in count, 7 d (EXPLAIN ANALYZE) | scan |\n|---|---|---|---|---|\n${table.join('\n')}\n`);
}

await main();
