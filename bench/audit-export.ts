// The audit log's export in bounded memory (issue 26): one store's log filled by SQL
// (bench/audit-fill.ts, the store `bench:growth` reads) to each of EXPORT_SIZES entries, then
// `GET /auth-api/v1/auditlogs/export?format=ndjson` and `format=csv` streamed to nowhere
// (lines and bytes counted) from the service in a process of its own (bench/sut-server.ts, a
// fresh one per export), whose VmRSS is sampled every 20 ms: before (after a warm-up: one page
// and an export of nothing), the peak during, and 2 s after. Prints one table; target: the peak
// above the baseline small and not growing with the rows (100,000 against 1,000,000).
//
//   DATABASE_URL=postgres://…/<a database for this bench only> npm run bench:audit-export
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { AUDIT_OWNER, AUDIT_PASSWORD, AUDIT_STORE, HEADER, auditStore, fillAudit } from './audit-fill.js';
import { memoryMb, startService } from './process-stats.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // dist/bench
const SIZES = (process.env.EXPORT_SIZES ?? '100000,1000000').split(',').map(Number).filter((n) => n > 0);
const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('bench:audit-export needs DATABASE_URL: a PostgreSQL database for this bench only (it adds up to 1,000,000 audit entries)\n');
  process.exit(1);
}
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));

function start(): Promise<{ child: ChildProcess; port: number }> {
  return startService(path.dirname(HERE), {}, children);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

// Reads the whole answer, keeping nothing: its lines and bytes.
async function drain(res: Response): Promise<{ lines: number; bytes: number }> {
  if (!res.ok || !res.body) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  let lines = 0;
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return { lines, bytes };
}

async function exportOnce(format: 'ndjson' | 'csv', size: number): Promise<string[]> {
  const { child, port } = await start();
  const base = `http://127.0.0.1:${port}/auth-api`;
  try {
    const res = await fetch(`${base}/login`, { method: 'POST', headers: { 'content-type': 'application/json', [HEADER]: AUDIT_STORE }, body: JSON.stringify({ username: AUDIT_OWNER, password: AUDIT_PASSWORD }) });
    if (!res.ok) throw new Error(`login: ${res.status} ${await res.text()}`);
    const headers = { [HEADER]: AUDIT_STORE, authorization: `Bearer ${((await res.json()) as { accessToken: string }).accessToken}` };
    // Warm-up: the list and the export's code paths, an export that matches nothing.
    await drain(await fetch(`${base}/v1/auditlogs?pageRowCount=50`, { headers }));
    await drain(await fetch(`${base}/v1/auditlogs/export?format=${format}&actorId=nobody`, { headers }));
    await sleep(2000);
    const baseline = memoryMb(child.pid!).rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, memoryMb(child.pid!).rss);
    }, 20);
    const t0 = performance.now();
    const { lines, bytes } = await drain(await fetch(`${base}/v1/auditlogs/export?format=${format}`, { headers }));
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, memoryMb(child.pid!).rss);
    await sleep(2000);
    const after = memoryMb(child.pid!).rss;
    const rows = format === 'csv' ? lines - 1 : lines;
    return [size.toLocaleString('en'), format, rows.toLocaleString('en'), `${(bytes / 1e6).toFixed(0)} MB`, seconds.toFixed(1), Math.round(rows / seconds).toLocaleString('en'), String(baseline), String(peak), String(peak - baseline), String(after)];
  } finally {
    await stop(child);
  }
}

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const table: string[][] = [];
  try {
    const storeId = await auditStore(db);
    for (const size of SIZES) {
      await fillAudit(db, storeId, size, (s) => process.stderr.write(`${s}\n`));
      for (const format of ['ndjson', 'csv'] as const) {
        table.push(await exportOnce(format, size));
        process.stdout.write(`${table.at(-1)!.join('\t')}\n`);
      }
    }
  } finally {
    await db.end();
  }
  process.stdout.write(`\n| audit entries | format | rows | bytes | seconds | rows/s | RSS before MB | peak MB | peak − before MB | 2 s after MB |\n|---|---|---|---|---|---|---|---|---|---|\n`);
  for (const r of table) process.stdout.write(`| ${r.join(' | ')} |\n`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
