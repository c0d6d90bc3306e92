// Growth: the store picker and login as the number of stores and users grows.
//
//   DATABASE_URL=postgres://…/<a database for this bench only> npm run bench:growth
//
// Starts the service in this process on that database, then for 100, 1,000, 10,000 and 100,000
// stores (each with one user; added by SQL, all users sharing one bcrypt hash) measures the p50
// of sequential requests: `GET /auth-api/v1/briefstores` first page, its middle page by page
// number and by `after` (the last codename of the page before), and login of a user of the newest
// store. Prints one table; targets: each column within ±20 % of its value at 100 stores (the
// middle page by number is compared from 1,000 stores on).
//
// Then the audit log (issue 26): one store's log filled by SQL to 10,000, 100,000 and 1,000,000
// entries (bench/audit-fill.ts; AUDIT_SIZES), read as the store's owner, p50 of sequential
// requests of `GET /auth-api/v1/auditlogs`: the first page and a page 90 % deep by `after` (a
// cursor built as the service builds it), unfiltered, `action=user.login.*`, `apikey.*`, a
// prefix that matches nothing (first page only) and `actorId=` (one user's entries, 8 in
// 1,000). Prints a second table; target: each deep page within ±20 % of its first page.
// SIZES= (empty) skips the stores, AUDIT_SIZES= (empty) the audit log.
import bcrypt from 'bcrypt';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../src/app.js';
import { AUDIT_OWNER, AUDIT_PASSWORD, AUDIT_STORE, BENCH_ACTOR, auditStore, cursorAt, fillAudit } from './audit-fill.js';
import { median } from './process-stats.js';

const sizes = (list: string) => list.split(',').map(Number).filter((n) => n > 0);
const SIZES = sizes(process.env.SIZES ?? '100,1000,10000,100000');
const AUDIT_SIZES = sizes(process.env.AUDIT_SIZES ?? '10000,100000,1000000');
const AUDIT_PAGE_ROWS = 50;
const PASSWORD = 'growth bench password';
const PAGE_ROWS = 20;
const HEADER = 'svc-store-codename';
const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('bench:growth needs DATABASE_URL: a PostgreSQL database for this bench only (it adds up to 100,000 stores and 1,000,000 audit entries)\n');
  process.exit(1);
}

async function p50(n: number, request: () => Promise<Response>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await request();
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${res.url}: ${res.status}`);
    times.push(performance.now() - t0);
  }
  return median(times);
}

// Stores g-<i> with one user each, up to `size` (counting the stores already there).
async function grow(db: pg.Client, size: number, hash: string): Promise<void> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM stores WHERE codename LIKE 'g-%'`);
  const from = rows[0].n + 1;
  for (let start = from; start <= size; start += 10_000) {
    const end = Math.min(size, start + 9_999);
    await db.query(
      `WITH s AS (
         INSERT INTO stores (codename, name, fullname, avatar, "ownerId", "createdAt")
         SELECT 'g-' || i, 'Growth ' || i, 'Growth store ' || i, 'https://example.test/a.png', NULL, now() + i * interval '1 microsecond'
         FROM generate_series($1::int, $2::int) AS i RETURNING id, codename)
       INSERT INTO users ("storeId", email, fullname, "passwordHash", avatar, roles, "emailVerified")
       SELECT id, replace(codename, 'g-', 'u') || '@growth.test', 'Growth user', $3, 'https://example.test/a.png', ARRAY['tenantOwner'], true FROM s`,
      [start, end, hash],
    );
  }
  await db.query('ANALYZE stores; ANALYZE users');
}

async function storeGrowth(db: pg.Client, base: string): Promise<void> {
  const hash = await bcrypt.hash(PASSWORD, Number(process.env.BCRYPT_COST ?? 10));
  const table: string[][] = [];
  for (const size of SIZES) {
    await grow(db, size, hash);
    const brief = (page: number) => () => fetch(`${base}/auth-api/v1/briefstores?pageRowCount=${PAGE_ROWS}&pageNumber=${page}`);
    const total = ((await (await brief(1)()).json()) as { paging: { totalRowCount: number } }).paging.totalRowCount;
    const middle = Math.max(1, Math.ceil(total / PAGE_ROWS / 2));
    // The first size is measured with a warm service, as the later ones are (compiled code paths,
    // pooled connections): a cold first column would make every later one look faster.
    if (size === SIZES[0]) for (const page of [1, middle]) await p50(200, brief(page));
    const [first, mid] = [await p50(200, brief(1)), await p50(200, brief(middle))];
    const before = ((await (await brief(middle - 1)()).json()) as { stores: { codename: string }[] }).stores.at(-1)?.codename;
    const byAfter = before ? await p50(200, () => fetch(`${base}/auth-api/v1/briefstores?pageRowCount=${PAGE_ROWS}&pageNumber=${middle}&after=${before}`)) : first;
    const login = () =>
      fetch(`${base}/auth-api/login`, { method: 'POST', headers: { 'content-type': 'application/json', [HEADER]: `g-${size}` }, body: JSON.stringify({ username: `u${size}@growth.test`, password: PASSWORD }) });
    const loginMs = await p50(30, login);
    table.push([size.toLocaleString('en'), String(total), first.toFixed(2), `${mid.toFixed(2)} (page ${middle})`, byAfter.toFixed(2), loginMs.toFixed(1)]);
    process.stdout.write(`${table.at(-1)!.join('\t')}\n`);
  }
  const rel = (col: number, from = 0) => table.slice(from).map((r) => parseFloat(r[col]) / parseFloat(table[from][col]));
  process.stdout.write(`\n| stores | totalRowCount | briefstores page 1 p50 ms | middle page p50 ms | middle page by \`after\` p50 ms | login p50 ms |\n|---|---|---|---|---|---|\n`);
  for (const r of table) process.stdout.write(`| ${r.join(' | ')} |\n`);
  const within = (xs: number[]) => xs.every((x) => x >= 0.8 && x <= 1.2);
  process.stdout.write(`\npage 1 within ±20 %: ${within(rel(2))}; middle page (from the 2nd size): ${within(rel(3, 1))}; by after: ${within(rel(4))}; login: ${within(rel(5))}\n\n`);
}

// The audit log of one store at each of AUDIT_SIZES: first page against a page 90 % deep.
async function auditGrowth(db: pg.Client, base: string): Promise<void> {
  const storeId = await auditStore(db);
  const filters: { name: string; query: string; where: string; params: unknown[] }[] = [
    { name: 'all', query: '', where: 'true', params: [] },
    { name: 'action=user.login.*', query: '&action=user.login.*', where: `action LIKE 'user.login.%'`, params: [] },
    { name: 'action=apikey.* (1 in 10)', query: '&action=apikey.*', where: `action LIKE 'apikey.%'`, params: [] },
    { name: 'action=session.* (none)', query: '&action=session.*', where: `action LIKE 'session.%'`, params: [] },
    { name: 'actorId= (8 in 1,000)', query: `&actorId=${BENCH_ACTOR}`, where: `"actorId" = $2`, params: [BENCH_ACTOR] },
  ];
  const rows: string[][] = [];
  const ratios: number[] = [];
  for (const size of AUDIT_SIZES) {
    await fillAudit(db, storeId, size, (s) => process.stderr.write(`${s}\n`));
    const res = await fetch(`${base}/auth-api/login`, { method: 'POST', headers: { 'content-type': 'application/json', [HEADER]: AUDIT_STORE }, body: JSON.stringify({ username: AUDIT_OWNER, password: AUDIT_PASSWORD }) });
    if (!res.ok) throw new Error(`login: ${res.status} ${await res.text()}`);
    const headers = { [HEADER]: AUDIT_STORE, authorization: `Bearer ${((await res.json()) as { accessToken: string }).accessToken}` };
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the login's entry is written in the next batch
    const list = (query: string) => () => fetch(`${base}/auth-api/v1/auditlogs?pageRowCount=${AUDIT_PAGE_ROWS}${query}`, { headers });
    for (const f of filters) {
      const { rows: n } = await db.query(`SELECT count(*)::int AS n FROM audit_log WHERE "storeId" = $1 AND ${f.where}`, [storeId, ...f.params]);
      const first = () => p50(100, list(f.query));
      if (n[0].n < 2 * AUDIT_PAGE_ROWS) {
        rows.push([size.toLocaleString('en'), f.name, n[0].n.toLocaleString('en'), (await first()).toFixed(2), '— (one page)', '—']);
        process.stdout.write(`${rows.at(-1)!.join('\t')}\n`);
        continue;
      }
      const depth = Math.min(Math.floor(n[0].n * 0.9), n[0].n - AUDIT_PAGE_ROWS);
      const after = await cursorAt(db, storeId, f.where, f.params, depth, AUDIT_PAGE_ROWS);
      // The deep page answers a full page of entries older than the cursor, and counts the same total.
      const deep = (await (await list(`${f.query}&after=${after}`)()).json()) as { auditLogs?: unknown[]; paging?: { totalRowCount: number } };
      if (deep.auditLogs?.length !== AUDIT_PAGE_ROWS || deep.paging?.totalRowCount !== n[0].n) throw new Error(`${f.name}: the deep page answered ${JSON.stringify({ ...deep, auditLogs: deep.auditLogs?.length })}`);
      if (size === AUDIT_SIZES[0] && f === filters[0]) for (const q of [f.query, `${f.query}&after=${after}`]) await p50(50, list(q));
      const firstMs = await first();
      const deepMs = await p50(100, list(`${f.query}&after=${after}`));
      ratios.push(deepMs / firstMs);
      rows.push([size.toLocaleString('en'), f.name, n[0].n.toLocaleString('en'), firstMs.toFixed(2), `${deepMs.toFixed(2)} (${depth.toLocaleString('en')} deep)`, (deepMs / firstMs).toFixed(2)]);
      process.stdout.write(`${rows.at(-1)!.join('\t')}\n`);
    }
  }
  process.stdout.write(`\n| audit entries | filter | matches | page 1 p50 ms | page by \`after\`, 90 % deep, p50 ms | deep / first |\n|---|---|---|---|---|---|\n`);
  for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);
  process.stdout.write(`\ndeep page within ±20 % of the first: ${ratios.every((x) => x >= 0.8 && x <= 1.2)}\n`);
}

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const running = await createApp({
    env: { NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:3000', DATABASE_URL: url, BCRYPT_COST: process.env.BCRYPT_COST ?? '10', LOG_LEVEL: 'warn', SUPER_ADMIN_PASSWORD: 'growth-bench-admin-password' },
    settings: { rateLimits: { loginPerIp: { points: 1_000_000, durationSeconds: 1 }, loginPerUsername: { points: 1_000_000, durationSeconds: 1 } } },
  });
  await running.app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(running.app.getHttpServer().address() as AddressInfo).port}`;
  try {
    if (SIZES.length) await storeGrowth(db, base);
    if (AUDIT_SIZES.length) await auditGrowth(db, base);
  } finally {
    await running.close();
    await db.end();
  }
}

await main();
