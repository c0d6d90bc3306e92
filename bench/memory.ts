// Idle memory and start time of the service as `npm start` runs it (same node flags, read from
// package.json), in a process of its own, in production mode with the shipped default settings:
//
//   npm run bench:memory
//
// 1. PostgreSQL + Redis (DATABASE_URL, REDIS_URL; defaults below): time to the first answer of
//    GET /health/live, then RSS after 3 s idle (IDLE_MS) and after 30 s (SETTLED_MS; 0 skips it):
//    V8 keeps the young generation the boot grew to until its memory reducer runs, about 15 s
//    after boot when nothing happens, so the 30 s figure is the settled idle one.
// 2. Embedded database, first boot in a fresh data directory (from the build's template): time to
//    the first answer and the peak RSS (VmHWM) up to 3 s idle after it.
// 3. Embedded database, a later boot of the same directory: time to the first answer, idle RSS.
// 4. PGlite alone reopening that directory (what the embedded database costs by itself).
// 5. bench:auth's service process (bench/sut-server.ts, which bench/auth.ts starts with
//    --enable-source-maps) on PostgreSQL + Redis, for comparison with the idle RSS it prints.
// With PROVIDERS=1, step 1 runs again with every notification provider and the realtime channel
// configured (they load their SDKs only then). MODES=postgres,first,later,pglite,sut,providers
// picks. Each step runs RUNS times (default 3, a fresh data directory each time); the median is
// printed with the range: RSS 3 s after boot depends on where the last GC left the heap.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, memoryMb } from './process-stats.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // dist/bench
const ROOT = path.resolve(HERE, '../..');
const MAIN = path.join(ROOT, 'dist/src/main.js');
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/svcbench';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const IDLE_MS = Number(process.env.IDLE_MS ?? 3000);
const SETTLED_MS = Number(process.env.SETTLED_MS ?? 30_000);
const MODES = (process.env.MODES ?? `postgres,first,later,pglite,sut${process.env.PROVIDERS ? ',providers' : ''}`).split(',');
const RUNS = Number(process.env.RUNS ?? 3);

// `npm start`'s node flags: `node <flags> dist/src/main.js`.
function startFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = pkg.scripts.start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/src/main.js') throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return words.slice(1, -1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Measured {
  bootMs: number;
  rss: number;
  // RSS SETTLED_MS after the first answer (NaN when not measured)
  settled: number;
  peak: number;
}

// Starts `node <args>` with `env`, waits for `ready(stdout + stderr)` to give the port (or true),
// then for GET /health/live to answer; idles IDLE_MS (3 s) and SETTLED_MS (30 s), reading memory at
// each, and stops it.
async function measure(args: string[], env: NodeJS.ProcessEnv, ready: (out: string) => number | true | undefined): Promise<Measured> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<never>((_, reject) => child.on('exit', (code) => reject(new Error(`exited (${code}): ${err.slice(-2000)}`))));
  try {
    const answered = (async () => {
      for (;;) {
        const port = ready(out + err);
        if (port === true) return;
        if (port !== undefined) {
          const res = await fetch(`http://127.0.0.1:${port}/health/live`);
          if (res.status !== 200) throw new Error(`/health/live answered ${res.status}`);
          await res.arrayBuffer();
          return;
        }
        await sleep(5);
      }
    })();
    await Promise.race([answered, exited, sleep(180_000).then(() => Promise.reject(new Error(`no answer in 180 s: ${err.slice(-2000)}`)))]);
    const bootMs = Math.round(performance.now() - started);
    await sleep(IDLE_MS);
    const { rss, peak } = memoryMb(child.pid!);
    if (SETTLED_MS <= IDLE_MS) return { bootMs, rss, settled: NaN, peak };
    await sleep(SETTLED_MS - IDLE_MS);
    return { bootMs, rss, settled: memoryMb(child.pid!).rss, peak };
  } finally {
    child.removeAllListeners('exit');
    const gone = new Promise((r) => child.once('exit', r));
    if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.race([gone, sleep(15_000).then(() => child.kill('SIGKILL'))]);
  }
}

function service(env: Record<string, string | undefined>): Promise<Measured> {
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    // the service's own address (production requires one); nothing is called there
    PUBLIC_URL: 'http://127.0.0.1:3000',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    SUPER_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
    ...env,
  };
  // main.ts prints one plain line: "<project>-<service> <version> listening on http://host:port".
  return measure([...startFlags(), MAIN], base, (out) => {
    const m = /listening on http:\/\/[^:\s]+:(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  });
}

// The realtime channel and every notification provider configured (nothing is contacted at boot).
function providerSettings(dir: string): string {
  const file = path.join(dir, 'providers.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      realtimeChannel: { appId: '1', key: 'bench-key', secret: { env: 'BENCH_SECRET' }, cluster: 'mt1', host: '127.0.0.1', port: 1, useTLS: false },
      notifications: {
        providers: [
          { providerName: 'mail', providerType: 'smtp', providerSettings: { host: '127.0.0.1', port: 1, from: 'bench@example.com' } },
          { providerName: 'sms', providerType: 'twilio', providerSettings: { accountSid: `AC${'0'.repeat(32)}`, authToken: { env: 'BENCH_SECRET' }, from: '+15005550006' } },
          { providerName: 'push', providerType: 'onesignal', providerSettings: { appId: '8a1b2c3d-0000-4000-8000-00000000a11d', restApiKey: { env: 'BENCH_SECRET' } } },
        ],
        channels: [
          { channelName: 'inApp', providers: [], fallbackProviders: [] },
          { channelName: 'email', providers: ['mail'], fallbackProviders: [] },
          { channelName: 'sms', providers: ['sms'], fallbackProviders: [] },
          { channelName: 'push', providers: ['push'], fallbackProviders: [] },
        ],
      },
    }),
  );
  return file;
}

// PGlite by itself reopening the data directory, with nothing else loaded. The open database stays
// reachable: once nothing refers to it, V8 collects it whole, memory and all (which made this
// reference read 123 MB in some runs of an earlier version of this bench).
const PGLITE_ALONE = `
  import { PGlite } from '@electric-sql/pglite';
  const db = await PGlite.create(process.argv[1]);
  await db.query('select 1');
  process.stdout.write('ready\\n');
  setInterval(() => db.closed, 1 << 30);
`;

// The service as bench:auth starts it.
function sutServer(): Promise<Measured> {
  const env = { PATH: process.env.PATH, DATABASE_URL, REDIS_URL, LOG_LEVEL: 'warn' };
  return measure(['--enable-source-maps', path.join(HERE, 'sut-server.js')], env, (out) => {
    const m = /listening (\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  });
}

interface Summary {
  bootMs: number[];
  rss: number[];
  settled: number[];
  peak: number[];
}

async function runs(step: (run: number) => Promise<Measured>): Promise<Summary> {
  const all: Measured[] = [];
  for (let i = 0; i < RUNS; i++) all.push(await step(i));
  return { bootMs: all.map((m) => m.bootMs), rss: all.map((m) => m.rss), settled: all.map((m) => m.settled), peak: all.map((m) => m.peak) };
}

const show = (xs: number[], unit: string, width: number) =>
  `${String(median(xs)).padStart(width)} ${unit}${xs.length > 1 ? ` (${Math.min(...xs)}–${Math.max(...xs)})`.padEnd(width * 2 + 4) : ''}`;

const line = (label: string, m: Summary, extra = '') =>
  process.stdout.write(
    `${label.padEnd(42)} first answer ${show(m.bootMs, 'ms', 5)}  RSS ${IDLE_MS / 1000} s ${show(m.rss, 'MB', 4)}` +
      `${SETTLED_MS > IDLE_MS ? `  ${SETTLED_MS / 1000} s ${show(m.settled, 'MB', 4)}` : ''}  peak ${show(m.peak, 'MB', 4)}${extra}\n`,
  );

async function main(): Promise<void> {
  if (!fs.existsSync(MAIN)) throw new Error('build first: npm run build');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-memory-'));
  try {
    process.stdout.write(`node ${process.version}, npm start flags: ${startFlags().join(' ') || '(none)'}, median of ${RUNS} (range)\n`);
    if (MODES.includes('postgres')) line('PostgreSQL + Redis, default settings', await runs(() => service({ DATABASE_URL, REDIS_URL })));
    if (MODES.includes('providers')) {
      const settings = providerSettings(tmp);
      line('PostgreSQL + Redis, providers configured', await runs(() => service({ DATABASE_URL, REDIS_URL, SERVICE_SETTINGS: settings, BENCH_SECRET: 'bench-secret' })));
    }
    // Each run's first boot gets a data directory of its own; the later boots reopen the last.
    const dataDir = (run: number) => path.join(tmp, `data-${run}`);
    if (MODES.includes('first') || MODES.includes('later') || MODES.includes('pglite')) {
      const first = await runs((run) => service({ DATA_DIR: dataDir(run) }));
      if (MODES.includes('first')) line('embedded, first boot (fresh data dir)', first);
    }
    let later: Summary | undefined;
    if (MODES.includes('later')) line('embedded, later boot', (later = await runs(() => service({ DATA_DIR: dataDir(0) }))));
    if (MODES.includes('pglite')) {
      const alone = await runs(() => measure(['--input-type=module', '-e', PGLITE_ALONE, path.join(dataDir(0), 'pglite')], { PATH: process.env.PATH }, (out) => (out.includes('ready') ? true : undefined)));
      const above = later && ` service − PGlite: ${median(later.rss) - median(alone.rss)} MB${SETTLED_MS > IDLE_MS ? `, ${median(later.settled) - median(alone.settled)} MB settled` : ''}`;
      line('PGlite alone, reopening that data dir', alone, above);
    }
    if (MODES.includes('sut')) line('bench:auth service (sut-server, PostgreSQL)', await runs(() => sutServer()));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
