// Requests per second of one route authenticated by an API key against the same route with a
// login's JWT. Boots the real app on the embedded database (in memory), on 127.0.0.1 only, with
// Redis only when REDIS_URL is set. Bounded: a fixed number of requests per variant and a deadline.
//
//   npm run bench:auth          (BENCH_REQUESTS, BENCH_CONCURRENCY to change the defaults)
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createApp, type RunningApp } from '../src/app.js';

const REQUESTS = positiveInt('BENCH_REQUESTS', 2000);
const CONCURRENCY = positiveInt('BENCH_CONCURRENCY', 20);
const WARMUP = 300;
const REQUEST_TIMEOUT_MS = 10_000;
// Whole run, boot included: past it the bench stops and says so.
const DEADLINE = performance.now() + 5 * 60_000;
const ROUTE = '/auth-api/v1/users?pageRowCount=1';
const PASSWORD = 'bench password 1234';

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000) throw new Error(`${name} must be an integer from 1 to 1000000`);
  return value;
}

interface Reply {
  status: number;
  body: string;
}

function send(agent: http.Agent, port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function expectJson(reply: Promise<Reply>, status: number, what: string): Promise<Record<string, any>> {
  const r = await reply;
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status}: ${r.body.slice(0, 300)}`);
  return JSON.parse(r.body) as Record<string, any>;
}

interface Measure {
  requests: number;
  ms: number;
  latencies: number[];
}

// `count` GETs of the route, `CONCURRENCY` at a time; any answer but 200 stops the bench.
async function run(agent: http.Agent, port: number, headers: Record<string, string>, count: number): Promise<Measure> {
  let issued = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const worker = async () => {
    while (issued < count) {
      if (performance.now() > DEADLINE) throw new Error('deadline passed: the machine is too busy for a meaningful figure');
      issued++;
      const t0 = performance.now();
      const r = await send(agent, port, 'GET', ROUTE, headers);
      latencies.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`GET ${ROUTE}: expected 200, got ${r.status}: ${r.body.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
  return { requests: count, ms: performance.now() - started, latencies };
}

function combine(parts: Measure[]): { rps: number; p50: number; p99: number } {
  const requests = parts.reduce((n, p) => n + p.requests, 0);
  const ms = parts.reduce((n, p) => n + p.ms, 0);
  const sorted = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { rps: Math.round((requests / ms) * 1000), p50: at(0.5), p99: at(0.99) };
}

async function main(): Promise<void> {
  const running: RunningApp = await createApp({
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'silent',
      DATA_DIR: ':memory:',
      SUPER_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      REDIS_URL: process.env.REDIS_URL,
    },
    // one registration and one login here; counters other runs left in a shared Redis must not stop it
    settings: {
      rateLimits: {
        registration: { points: 1_000_000, durationSeconds: 1 },
        loginPerIp: { points: 1_000_000, durationSeconds: 1 },
        loginPerUsername: { points: 1_000_000, durationSeconds: 1 },
      },
    },
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    await running.app.listen(0, '127.0.0.1');
    const { port } = running.app.getHttpServer().address() as AddressInfo;

    const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await expectJson(
      send(agent, port, 'POST', '/auth-api/v1/registerstoreowner', {}, { email, password: PASSWORD, fullname: 'Bench Owner', store: { name: `Bench ${randomBytes(3).toString('hex')}` } }),
      201,
      'register a store',
    );
    const codename: string = registered.store.codename;
    const store = { 'svc-store-codename': codename };
    const session = await expectJson(send(agent, port, 'POST', '/auth-api/login', store, { username: email, password: PASSWORD }), 200, 'log in');
    const jwt = { ...store, authorization: `Bearer ${session.accessToken}` };
    const created = await expectJson(send(agent, port, 'POST', '/auth-api/v1/apikeys', jwt, { name: 'bench' }), 201, 'create an API key');
    const key = { ...store, authorization: `Bearer ${created.apiKey.key}` };
    // the key without the store named: its store is resolved from the key
    const keyOnly = { authorization: `Bearer ${created.apiKey.key}` };

    const variants = { key, keyOnly, jwt };
    for (const headers of Object.values(variants)) await run(agent, port, headers, WARMUP);

    // Two rounds in alternating order, half the requests each, so drift in machine load spreads evenly.
    const results: Record<keyof typeof variants, Measure[]> = { key: [], keyOnly: [], jwt: [] };
    const half = Math.ceil(REQUESTS / 2);
    for (const order of [['key', 'keyOnly', 'jwt'], ['jwt', 'keyOnly', 'key']] as Array<Array<keyof typeof variants>>) {
      for (const name of order) results[name].push(await run(agent, port, variants[name], half));
    }

    const k = combine(results.key);
    const ko = combine(results.keyOnly);
    const j = combine(results.jwt);
    const ms = (v: number) => v.toFixed(1);
    process.stdout.write(
      `GET /auth-api/v1/users  api key: ${k.rps} req/s  jwt: ${j.rps} req/s\n` +
        `  (${half * 2} requests each, concurrency ${CONCURRENCY}, after ${WARMUP} warm-up; ${running.config.env.REDIS_URL ? 'Redis' : 'in-process'} session cache, embedded database)\n` +
        `  api key, store named:     p50 ${ms(k.p50)} ms  p99 ${ms(k.p99)} ms\n` +
        `  api key, store from key:  ${ko.rps} req/s  p50 ${ms(ko.p50)} ms  p99 ${ms(ko.p99)} ms\n` +
        `  jwt:                      p50 ${ms(j.p50)} ms  p99 ${ms(j.p99)} ms\n`,
    );
  } finally {
    agent.destroy();
    await running.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
