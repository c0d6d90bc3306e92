// The authenticated route and login against a raw node:http floor, side by side in one run.
//
//   npm run bench:auth                 embedded database (DATABASE_URL unset) or PostgreSQL
//   DATABASE_URL=postgres://…/<a database for the bench only> REDIS_URL=redis://… npm run bench:auth
//
// 1. Starts the service in its own process (bench/sut-server.ts) on 127.0.0.1.
// 2. Runs the shared harness (../shared/bench/run-auth.mjs, or BENCH_HARNESS) with its `floor`
//    target and the service, rounds interleaved: `GET /auth-api/currentuser` with a Bearer JWT
//    over 100 sessions, and login; it prints sut/floor and the login's sut/hash-bound.
// 3. Runs the same route with an API key and with a JWT, interleaved, against the service only;
//    the key's ratio to the floor is the harness's JWT ratio times key/JWT from this step.
// 4. Refresh (SCENARIOS=refresh, or with the others by default): the harness's floor login
//    (hash-free), then the service's POST /auth-api/refresh, each connection following its own
//    session's rotation; prints refresh/floor-login.
// Harness settings pass through (C, D, R, LC, LD, LR, WARMUP); SCENARIOS=auth skips the others.
import autocannon from 'autocannon';
import bcrypt from 'bcrypt';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, memoryMb } from './process-stats.js';
import { refreshRequests } from './refresh-load.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // dist/bench
const ROOT = path.resolve(HERE, '../..');
const HARNESS = process.env.BENCH_HARNESS ?? path.resolve(ROOT, '../shared/bench/run-auth.mjs');
const ROUTE = '/auth-api/currentuser';
const PASSWORD = 'bench password 1234';
const SESSIONS = 100;
const CONNECTIONS = Number(process.env.C ?? 64);
const SECONDS = Number(process.env.D ?? 10);
const ROUNDS = Number(process.env.R ?? 3);
const children: ChildProcess[] = [];

function stopChildren(): void {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGTERM');
}
process.on('exit', stopChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

// Median time of one bcrypt compare at the service's cost, measured before anything starts.
async function hashMs(cost: number): Promise<number> {
  const hash = await bcrypt.hash(PASSWORD, cost);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await bcrypt.compare(PASSWORD, hash);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[2];
}

let serviceErr = '';

// The service's event-loop delay since the previous call (see bench/sut-server.ts).
async function loopDelay(pid: number): Promise<string> {
  const before = serviceErr.length;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !serviceErr.slice(before).includes('\n'); i++) await new Promise((r) => setTimeout(r, 20));
  return /event-loop delay (.*)/.exec(serviceErr.slice(before))?.[1] ?? '?';
}

function startService(): Promise<{ port: number; pid: number; bootMs: number }> {
  const child = spawn(process.execPath, ['--enable-source-maps', path.join(HERE, 'sut-server.js')], {
    env: { ...process.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the service did not start in 120 s: ${err.slice(-2000)}`)), 120_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      serviceErr = err;
      const m = /listening (\d+) (\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), pid: child.pid!, bootMs: Number(m[2]) });
      }
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}): ${err.slice(-2000)}`)));
  });
}

function runHarness(args: string[]): Promise<number> {
  const child = spawn(process.execPath, ['--import', path.join(HERE, 'resolve-from-project.js'), HARNESS, ...args], { stdio: 'inherit', env: { NEST_FROM: ROOT, ...process.env } });
  children.push(child);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

async function call(port: number, method: string, route: string, headers: Record<string, string>, body?: unknown, expect = 200): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${route}: expected ${expect}, got ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

// user+system CPU of one process, in microseconds
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

interface Round {
  rps: number;
  p99: number;
  cpuPerReq: number;
  failed: number;
}

async function round(port: number, pid: number, headers: Record<string, string>, seconds: number): Promise<Round> {
  const cpu0 = cpuMicros(pid);
  const r = await autocannon({ url: `http://127.0.0.1:${port}${ROUTE}`, connections: CONNECTIONS, duration: seconds, headers });
  const cpu = cpuMicros(pid) - cpu0;
  return { rps: r.requests.average, p99: r.latency.p99, cpuPerReq: cpu / Math.max(1, r.requests.total), failed: r.non2xx + r.errors + r.timeouts };
}

async function main(): Promise<void> {
  const mode = process.env.DATABASE_URL ? 'postgres' : 'embedded';
  const cost = Number(process.env.BCRYPT_COST ?? 10); // as bench/sut-server.ts
  const hash = await hashMs(cost);
  const { port, pid, bootMs } = await startService();
  const out = path.join(ROOT, 'bench', 'results', `auth-${mode}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  await new Promise((r) => setTimeout(r, 3000)); // idle after boot
  const idle = memoryMb(pid);
  process.stdout.write(
    `service: ${mode} database, ${process.env.REDIS_URL ? 'Redis' : 'no Redis'}, pid ${pid}, booted in ${bootMs} ms, idle RSS ${idle.rss} MB (peak so far ${idle.peak} MB); bcrypt cost ${cost}: ${hash.toFixed(1)} ms/compare\n`,
  );

  // A login queued behind others at the hash bound takes seconds: a 2 s warm-up may see none end.
  process.env.WARMUP ??= '4';
  const harness = async (scenario: string, file: string) => {
    const code = await runHarness([
      // nest-floor: the framework's own cost (NestJS + Express, one guard), from this checkout's packages.
      '--targets', scenario === 'auth' ? 'floor,nest-floor,sut' : 'floor,sut',
      '--scenarios', scenario,
      '--sut-url', `http://127.0.0.1:${port}`,
      '--sut-pid', String(pid),
      '--sessions', String(SESSIONS),
      '--sut-hash-ms', hash.toFixed(1),
      '--out', file,
    ]);
    if (code !== 0 && code !== 2) throw new Error(`the harness failed (exit ${code})`);
  };
  const scenarios = (process.env.SCENARIOS ?? 'auth,login,refresh').split(',');
  if (scenarios.includes('refresh')) await refreshScenario(port, pid, out.replace(/\.json$/, '-refresh-floor.json'));
  let jwtToFloor: number | undefined;
  let jwtToNest: number | undefined;
  if (scenarios.includes('auth')) {
    await harness('auth', out);
    const ratios = JSON.parse(fs.readFileSync(out, 'utf8')).ratios?.auth;
    jwtToFloor = ratios?.['sut/floor'];
    jwtToNest = ratios?.['sut/nest-floor'];
  }
  // Login alone, so that the event loop's delay is the login storm's.
  if (scenarios.includes('login')) {
    await loopDelay(pid);
    await harness('login', out.replace(/\.json$/, '-login.json'));
    process.stdout.write(`service event-loop delay during the login scenario: ${await loopDelay(pid)}\n`);
  }
  if (!scenarios.includes('auth')) return stopChildren();

  // API key against JWT on the same route, same service, interleaved.
  const email = `key-${randomBytes(4).toString('hex')}@example.com`;
  const registered = await call(port, 'POST', '/auth-api/v1/registerstoreowner', {}, { email, password: PASSWORD, fullname: 'Bench Owner', store: { name: `Bench ${randomBytes(3).toString('hex')}` } }, 201);
  const store = { 'svc-store-codename': registered.store.codename as string };
  const session = await call(port, 'POST', '/auth-api/login', store, { username: email, password: PASSWORD });
  const jwt = { ...store, authorization: `Bearer ${session.accessToken}` };
  const created = await call(port, 'POST', '/auth-api/v1/apikeys', jwt, { name: 'bench' }, 201);
  const key = { ...store, authorization: `Bearer ${created.apiKey.key}` };
  await call(port, 'GET', ROUTE, key);
  const seconds = Math.max(2, Math.round(SECONDS / 2));
  await round(port, pid, key, 2);
  const runs: Record<'jwt' | 'key', Round[]> = { jwt: [], key: [] };
  for (let i = 0; i < ROUNDS; i++) {
    runs.jwt.push(await round(port, pid, jwt, seconds));
    runs.key.push(await round(port, pid, key, seconds));
  }
  const line = (name: 'jwt' | 'key') => {
    const rs = runs[name];
    return `${median(rs.map((r) => r.rps)).toFixed(0)} req/s, p99 ${median(rs.map((r) => r.p99))} ms, ${median(rs.map((r) => r.cpuPerReq)).toFixed(0)} µs CPU/req, ${rs.reduce((n, r) => n + r.failed, 0)} failed`;
  };
  const keyToJwt = median(runs.key.map((r) => r.rps)) / median(runs.jwt.map((r) => r.rps));
  process.stdout.write(
    `\n${ROUTE}, service only, ${CONNECTIONS} connections, ${ROUNDS} x ${seconds} s interleaved (${mode}):\n` +
      `  Bearer JWT: ${line('jwt')}\n  API key:    ${line('key')}\n` +
      `  key/JWT ${keyToJwt.toFixed(2)}; key/floor ≈ ${jwtToFloor === undefined ? '?' : (jwtToFloor * keyToJwt).toFixed(2)} (JWT sut/floor ${jwtToFloor?.toFixed(2) ?? '?'} from the harness)\n` +
      `  JWT sut/nest-floor ${jwtToNest?.toFixed(2) ?? '?'}; key/nest-floor ≈ ${jwtToNest === undefined ? '?' : (jwtToNest * keyToJwt).toFixed(2)}\n` +
      `raw results: ${path.relative(ROOT, out)}\n`,
  );
  stopChildren();
}

// Refreshes per second against the floor's hash-free login, in the same run: the floor first
// (through the harness), then the service with as many connections, each connection rotating
// its own session's refresh token.
async function refreshScenario(port: number, pid: number, floorFile: string): Promise<void> {
  const code = await runHarness(['--targets', 'floor', '--scenarios', 'login', '--out', floorFile]);
  if (code !== 0 && code !== 2) throw new Error(`the harness failed (exit ${code})`);
  const floorLogin: number | undefined = JSON.parse(fs.readFileSync(floorFile, 'utf8')).summary?.login?.floor?.reqPerSecMedian;
  const connections = Number(process.env.LC ?? 8);
  const seconds = Number(process.env.LD ?? SECONDS);
  const email = `refresh-${randomBytes(4).toString('hex')}@example.com`;
  const registered = await call(port, 'POST', '/auth-api/v1/registerstoreowner', {}, { email, password: PASSWORD, fullname: 'Bench Owner', store: { name: `Bench ${randomBytes(3).toString('hex')}` } }, 201);
  const store = { 'svc-store-codename': registered.store.codename as string };
  const fresh = async (): Promise<string> => {
    const session = await call(port, 'POST', '/auth-api/login', store, { username: email, password: PASSWORD });
    if (!session.refreshToken) throw new Error('the service answered no refresh token: accessTokenMinutes is not set');
    return session.refreshToken as string;
  };
  const refreshRound = async (secs: number): Promise<Round & { genPerReq: number }> => {
    const tokens = await Promise.all(Array.from({ length: connections }, fresh));
    const cpu0 = cpuMicros(pid);
    const gen0 = process.cpuUsage();
    const r = await autocannon({ url: `http://127.0.0.1:${port}/auth-api/refresh`, connections, duration: secs, requests: refreshRequests(tokens, store) } as any);
    const cpu = cpuMicros(pid) - cpu0;
    const gen = process.cpuUsage(gen0);
    const total = Math.max(1, r.requests.total);
    return { rps: r.requests.average, p99: r.latency.p99, cpuPerReq: cpu / total, genPerReq: (gen.user + gen.system) / total, failed: r.non2xx + r.errors + r.timeouts };
  };
  await refreshRound(Number(process.env.WARMUP)); // the same warm-up as the harness gives the floor
  const rounds: (Round & { genPerReq: number })[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await refreshRound(seconds));
  const rps = median(rounds.map((r) => r.rps));
  process.stdout.write(
    `\nPOST /auth-api/refresh, ${connections} connections, ${ROUNDS} x ${seconds} s: ${rps.toFixed(0)} refreshes/s, p99 ${median(rounds.map((r) => r.p99))} ms, ` +
      `${median(rounds.map((r) => r.cpuPerReq)).toFixed(0)} µs CPU/refresh (load generator ${median(rounds.map((r) => r.genPerReq)).toFixed(0)}), ${rounds.reduce((n, r) => n + r.failed, 0)} failed\n` +
      `  floor login (hash-free, same run): ${floorLogin?.toFixed(0) ?? '?'} req/s; refresh/floor-login ${floorLogin ? (rps / floorLogin).toFixed(2) : '?'}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
  stopChildren();
});
