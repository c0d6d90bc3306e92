// Latency of `start` of a verification flow, and of a passwordless sign-in, for identifiers that
// exist and for ones that do not: the two must not tell each other apart. Boots the real app in liveMode on the embedded
// database (in memory), on 127.0.0.1 only, with Redis only when REDIS_URL is set; the codes go
// through the real SMTP provider to an SMTP sink started here. Calls alternate between a known
// and an unknown address, one at a time, each address once (no resend window in the way).
//
//   npm run bench:verification          (BENCH_CALLS to change the default of 200 per kind)
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SMTPServer } from 'smtp-server';
import { createApp, type RunningApp } from '../src/app.js';

const CALLS = positiveInt('BENCH_CALLS', 200);
const WARMUP = 20;
const REQUEST_TIMEOUT_MS = 10_000;
// Whole run, boot included: past it the bench stops and says so.
const DEADLINE = performance.now() + 5 * 60_000;
const FLOW = 'password-reset-by-email';
const PASSWORD = 'bench password 1234';

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 100_000) throw new Error(`${name} must be an integer from 1 to 100000`);
  return value;
}

function post(agent: http.Agent, port: number, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path, agent, timeout: REQUEST_TIMEOUT_MS, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

// An SMTP server that accepts and forgets: the provider really sends, nothing is kept.
async function smtpSink(): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => callback());
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main(): Promise<void> {
  const sink = await smtpSink();
  const running: RunningApp = await createApp({
    env: {
      NODE_ENV: 'production',
      // the service's own address (production requires one); nothing is called there
      PUBLIC_URL: 'http://127.0.0.1:3000',
      LOG_LEVEL: 'silent',
      DATA_DIR: ':memory:',
      BCRYPT_COST: '4',
      SUPER_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      SERVICE_CODENAME: `bench${randomBytes(3).toString('hex')}`,
      REDIS_URL: process.env.REDIS_URL,
    },
    settings: {
      rateLimits: {
        registration: { points: 1_000_000, durationSeconds: 1 },
        loginPerIp: { points: 1_000_000, durationSeconds: 1 },
        loginPerUsername: { points: 1_000_000, durationSeconds: 1 },
        passwordlessPerAddress: { points: 1_000_000, durationSeconds: 1 },
        passwordlessPerIp: { points: 1_000_000, durationSeconds: 1 },
      },
      verification: { verificationMode: 'liveMode', flows: { [FLOW]: { enabled: true } } },
      passwordlessLogin: { enabled: true, channels: ['email'], verificationType: 'both', allowSignUp: false },
      notifications: {
        providers: [{ providerName: 'sink', providerType: 'smtp', providerSettings: { host: '127.0.0.1', port: sink.port, secure: false, from: 'bench@example.test' } }],
        channels: [
          { channelName: 'email', providers: ['sink'], fallbackProviders: [] },
          { channelName: 'inApp', providers: [], fallbackProviders: [] },
        ],
      },
    },
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await running.app.listen(0, '127.0.0.1');
    const { port } = running.app.getHttpServer().address() as AddressInfo;
    const owner = `bench-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await post(agent, port, '/auth-api/v1/registerstoreowner', {}, { email: owner, password: PASSWORD, fullname: 'Bench Owner', store: { name: `Bench ${randomBytes(3).toString('hex')}` } });
    if (registered.status !== 201) throw new Error(`register a store: ${registered.status} ${registered.body.slice(0, 300)}`);
    const store = { 'svc-store-codename': (JSON.parse(registered.body) as { store: { codename: string } }).store.codename };

    const total = WARMUP + CALLS;
    const known: string[] = [];
    for (let i = 0; i < total; i++) {
      const email = `known-${i}-${randomBytes(4).toString('hex')}@example.com`;
      const r = await post(agent, port, '/auth-api/v1/registerstoreuser', store, { email, password: PASSWORD, fullname: `User ${i}` });
      if (r.status !== 201) throw new Error(`register user ${i}: ${r.status} ${r.body.slice(0, 300)}`);
      known.push(email);
    }
    const queue = running.config.env.REDIS_URL ? 'BullMQ on Redis' : 'in-process queue';
    // The same known addresses serve both routes (their codes are of different flows); the
    // unknown ones are new to each.
    for (const path of [`/auth-api/verification-services/${FLOW}/start`, '/auth-api/passwordless/start']) {
      const unknown = known.map((_, i) => `unknown-${i}-${randomBytes(4).toString('hex')}@example.com`);
      const times = { known: [] as number[], unknown: [] as number[] };
      for (let i = 0; i < total; i++) {
        if (performance.now() > DEADLINE) throw new Error('deadline passed: the machine is too busy for a meaningful figure');
        // alternate which kind goes first, so drift in machine load spreads evenly
        const order = i % 2 ? (['unknown', 'known'] as const) : (['known', 'unknown'] as const);
        for (const kind of order) {
          const email = (kind === 'known' ? known : unknown)[i];
          const t0 = performance.now();
          const r = await post(agent, port, path, store, { email });
          const ms = performance.now() - t0;
          if (r.status !== 200) throw new Error(`${path} for a ${kind} address: ${r.status} ${r.body.slice(0, 300)}`);
          if (i >= WARMUP) times[kind].push(ms);
        }
      }
      const k = median(times.known);
      const u = median(times.unknown);
      const diff = (Math.abs(k - u) / Math.max(k, u)) * 100;
      process.stdout.write(
        `POST ${path}, p50 over ${CALLS} calls each (after ${WARMUP} warm-up; ${queue}, embedded database)\n` +
          `  known address:   ${k.toFixed(2)} ms\n` +
          `  unknown address: ${u.toFixed(2)} ms\n` +
          `  difference:      ${diff.toFixed(1)} % ${diff <= 10 ? '(within 10 %)' : '(MORE than 10 %)'}\n`,
      );
    }
  } finally {
    agent.destroy();
    await running.close();
    await sink.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
