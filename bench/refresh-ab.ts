// Refresh of this build against another build, in one run: one service process of each
// (bench/sut-server.ts of each build's dist) running at once, on databases of their own, and
// short refresh rounds alternating between them (A B, B A, …), so both meet the same phases of the
// machine. Per build: refreshes/s, and per refresh the CPU of the service process, of its main
// thread (and how much of that in the kernel), of PostgreSQL and of Redis (only one service is
// under load at a time, so the servers' CPU in a round is that build's).
//
//   DATABASE_URL=postgres://…/<db A> OTHER_DATABASE_URL=postgres://…/<db B> REDIS_URL=redis://… \
//     npm run bench:refresh-ab -- <the other build's dist folder>
// Without DATABASE_URL both run on the embedded database (PostgreSQL and Redis columns then 0).
// ROUNDS (10) rounds of D (2) seconds per build, LC (8) connections; each round starts from
// fresh sessions (a token in flight when a round ends is lost with it).
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService } from './process-stats.js';
import { refreshRequests } from './refresh-load.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // dist/bench
const PASSWORD = 'bench password 1234';
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const SECONDS = Number(process.env.D ?? 2);
const CONNECTIONS = Number(process.env.LC ?? 8);
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));

interface Build {
  name: string;
  port: number;
  pid: number;
  store: Record<string, string>;
  email: string;
  tokens: string[];
  refreshes: number;
  seconds: number;
  failed: number;
  cpu: Record<'service' | 'main' | 'kernel' | 'postgres' | 'redis', number>;
}


async function post(port: number, route: string, headers: Record<string, string>, body: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`POST ${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

// user and system time of a /proc stat line, in microseconds
function times(stat: string): { user: number; system: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

function processCpu(pid: number): number {
  const t = times(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return t.user + t.system;
}

// Every process whose name starts with `prefix` (postgres, redis-server), together.
function serverCpu(prefix: string): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.slice(stat.indexOf('(') + 1).startsWith(prefix)) continue;
      const t = times(stat);
      total += t.user + t.system;
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

function sample(b: Build): Build['cpu'] {
  const main = times(fs.readFileSync(`/proc/${b.pid}/task/${b.pid}/stat`, 'utf8'));
  return { service: processCpu(b.pid), main: main.user + main.system, kernel: main.system, postgres: serverCpu('postgres'), redis: serverCpu('redis') };
}

async function build(name: string, dist: string, databaseUrl: string | undefined): Promise<Build> {
  const { child, port } = await startService(dist, { DATABASE_URL: databaseUrl }, children);
  const pid = child.pid!;
  const email = `refresh-ab-${randomBytes(4).toString('hex')}@example.com`;
  const registered = await post(port, '/auth-api/v1/registerstoreowner', {}, { email, password: PASSWORD, fullname: 'Bench Owner', store: { name: `Bench ${randomBytes(3).toString('hex')}` } });
  const cpu = { service: 0, main: 0, kernel: 0, postgres: 0, redis: 0 };
  return { name, port, pid, email, store: { 'svc-store-codename': registered.store.codename as string }, tokens: [], refreshes: 0, seconds: 0, failed: 0, cpu };
}

async function round(b: Build, counted: boolean): Promise<void> {
  b.tokens = [];
  for (let i = 0; i < CONNECTIONS; i++) b.tokens.push((await post(b.port, '/auth-api/login', b.store, { username: b.email, password: PASSWORD })).refreshToken);
  const before = sample(b);
  const r = await autocannon({ url: `http://127.0.0.1:${b.port}/auth-api/refresh`, connections: CONNECTIONS, duration: SECONDS, requests: refreshRequests(b.tokens, b.store) } as any);
  if (!counted) return;
  const after = sample(b);
  for (const k of Object.keys(b.cpu) as (keyof Build['cpu'])[]) b.cpu[k] += after[k] - before[k];
  b.refreshes += r.requests.total;
  b.seconds += SECONDS;
  b.failed += r.non2xx + r.errors + r.timeouts;
}

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other || !fs.existsSync(path.join(other, 'bench', 'sut-server.js'))) throw new Error('usage: node dist/bench/refresh-ab.js <another build\'s dist folder>');
  if (process.env.DATABASE_URL && !process.env.OTHER_DATABASE_URL) throw new Error('OTHER_DATABASE_URL: a database of its own for the other build');
  const a = await build('this build', path.dirname(HERE), process.env.DATABASE_URL);
  const b = await build(`other (${other})`, path.resolve(other), process.env.OTHER_DATABASE_URL);
  await round(a, false);
  await round(b, false);
  for (let i = 0; i < ROUNDS; i++) for (const t of i % 2 ? [b, a] : [a, b]) await round(t, true);
  const per = (t: Build, k: keyof Build['cpu']) => (t.cpu[k] / Math.max(1, t.refreshes)).toFixed(0);
  for (const t of [a, b]) {
    process.stdout.write(
      `${t.name}: ${(t.refreshes / t.seconds).toFixed(0)} refreshes/s, ${t.failed} failed; CPU µs per refresh: service ${per(t, 'service')}, ` +
        `its main thread ${per(t, 'main')} (kernel ${per(t, 'kernel')}), PostgreSQL ${per(t, 'postgres')}, Redis ${per(t, 'redis')}\n`,
    );
  }
  const ratio = (k: keyof Build['cpu']) => (a.cpu[k] / a.refreshes / (b.cpu[k] / b.refreshes)).toFixed(2);
  process.stdout.write(
    `this/other: refreshes/s ${((a.refreshes / a.seconds) / (b.refreshes / b.seconds)).toFixed(2)}, service CPU ${ratio('service')}, main thread ${ratio('main')}, PostgreSQL ${ratio('postgres')}\n`,
  );
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));
