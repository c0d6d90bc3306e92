// How long logins wait for an answer during a burst of password checks, with password hashing
// bounded (BCRYPT_MAX_PENDING, default 32) and effectively unbounded (the behaviour before the
// bound). Boots the real app on 127.0.0.1 only: on DATABASE_URL and REDIS_URL when set, else on
// the embedded database (in memory), where the database rather than bcrypt limits a burst.
//
//   npm run bench:burst      (BENCH_BURST requests, default 200; BENCH_BCRYPT_COST, default 10;
//                             BENCH_PASSWORD=short for the same burst without bcrypt, as a baseline)
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createApp } from '../src/app.js';

const BURST = positiveInt('BENCH_BURST', 200);
const COST = positiveInt('BENCH_BCRYPT_COST', 10);

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 100_000) throw new Error(`${name} must be an integer from 1 to 100000`);
  return value;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(maxPending: number): Promise<void> {
  const app = await createApp({
    env: { NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: ':memory:', DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL, BCRYPT_COST: String(COST), BCRYPT_MAX_PENDING: String(maxPending) },
    settings: { rateLimits: { registration: { points: 1_000_000, durationSeconds: 1 }, loginPerIp: { points: 1_000_000, durationSeconds: 1 }, loginPerUsername: { points: 1_000_000, durationSeconds: 1 } } },
  });
  try {
    await app.app.listen(0, '127.0.0.1');
    const { port } = app.app.getHttpServer().address() as AddressInfo;
    const login = async (username: string) => {
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/auth-api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: process.env.BENCH_PASSWORD ?? 'a wrong password' }),
      });
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - started };
    };
    await login('warm-up@example.com');
    const began = performance.now();
    const replies = await Promise.all(Array.from({ length: BURST }, (_, i) => login(`burst${i}@example.com`)));
    const wall = performance.now() - began;
    const label = maxPending >= BURST ? 'unbounded' : `BCRYPT_MAX_PENDING=${maxPending}`;
    const summary = [401, 503]
      .map((status) => {
        const times = replies.filter((r) => r.status === status).map((r) => r.ms).sort((a, b) => a - b);
        return times.length ? `${status} ×${times.length} in p50 ${percentile(times, 50).toFixed(0)} ms, max ${times[times.length - 1].toFixed(0)} ms` : `${status} ×0`;
      })
      .join('; ');
    console.log(`${label.padEnd(24)} ${BURST} logins at once: ${summary}; burst over in ${wall.toFixed(0)} ms`);
  } finally {
    await app.close();
  }
}

console.log(`bcrypt cost ${COST}, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? 4}`);
await run(10_000);
await run(32);
