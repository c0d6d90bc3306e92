// The service as `npm run bench:auth` measures it: its own process (so its CPU is counted alone),
// on 127.0.0.1 only, on PostgreSQL when DATABASE_URL is set and otherwise on the embedded
// database. Logs at the configured level go to stdout, which the bench discards. Prints
// `listening <port>` once it answers; stops on SIGTERM. Give it a PostgreSQL database of its own:
// the seed there keeps the super administrator it creates (SUPER_ADMIN_PASSWORD, else random).
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createApp } from '../src/app.js';
import { releaseBootMemory } from '../src/platform/logging/boot-memory.js';

const started = performance.now();
const running = await createApp({
  env: {
    NODE_ENV: 'production',
    // the service's own address (production requires one); nothing is called there
    PUBLIC_URL: 'http://127.0.0.1:3000',
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    DATA_DIR: process.env.DATABASE_URL ? undefined : ':memory:',
    LOG_LEVEL: process.env.LOG_LEVEL,
    // the reference cost (52 ms per hash on an idle core here); BCRYPT_COST overrides
    BCRYPT_COST: process.env.BCRYPT_COST ?? '10',
    SUPER_ADMIN_PASSWORD: process.env.SUPER_ADMIN_PASSWORD ?? randomBytes(12).toString('hex'),
  },
  // The harness registers its users and logs in thousands of times from loopback, and holds
  // 100 sessions of one user at once.
  settings: {
    maxSessionsPerUser: 1000,
    // AUDIT_LOG=off: the audit log off, to compare login with it on and off.
    auditLog: { enabled: process.env.AUDIT_LOG !== 'off' },
    // Short access tokens with refresh tokens, as a deployment that turns them on (the refresh
    // scenario needs them; the other routes must not pay for them).
    accessTokenMinutes: 15,
    // An MFA policy in force (checked on every request), for a role the bench's users do not hold.
    mfaRequiredForRoles: ['saasAdmin'],
    rateLimits: {
      registration: { points: 1_000_000, durationSeconds: 1 },
      loginPerIp: { points: 1_000_000, durationSeconds: 1 },
      loginPerUsername: { points: 1_000_000, durationSeconds: 1 },
      refreshPerSession: { points: 1_000_000, durationSeconds: 1 },
      refreshPerIp: { points: 1_000_000, durationSeconds: 1 },
    },
  },
});
await releaseBootMemory(); // as main.ts does
await running.app.listen(0, '127.0.0.1');
const { port } = running.app.getHttpServer().address() as AddressInfo;
process.stderr.write(`listening ${port} ${Math.round(performance.now() - started)}\n`);

// SIGUSR2: the event loop's delay since the previous SIGUSR2 (or boot), then starts over.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
process.on('SIGUSR2', () => {
  process.stderr.write(`event-loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} max ${(loopDelay.max / 1e6).toFixed(1)} ms\n`);
  loopDelay.reset();
});

process.on('SIGTERM', () => {
  void running.close().finally(() => process.exit(0));
});
