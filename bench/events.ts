// The event channel under load: 1,000 Socket.IO and 1,000 SSE clients over 10 stores, holding a
// tenant-filtered topic, fed tenant-tagged events at 20/s and then at rising rates until it no
// longer keeps up; and, in the same run, a raw Socket.IO room broadcast as the floor, to as many
// receivers (BENCH_SOCKETS + BENCH_SSE Socket.IO clients over the same stores), so each floor
// event reaches as many clients as each channel event and the two deliveries/s compare like for
// like. The service runs in this process (its CPU is what is measured); the clients run in a
// child process. Loopback only. Redis Streams broker when REDIS_URL is set.
//
//   npm run bench:events     (BENCH_SOCKETS, BENCH_SSE, BENCH_STORES, BENCH_PHASE_MS)
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Server as IoServer } from 'socket.io';
import { io as ioClient, type Socket } from 'socket.io-client';
import { createApp, type RunningApp } from '../src/app.js';
import { EventPublisher } from '../src/delivery/broker/event-publisher.js';

const SOCKETS = positiveInt('BENCH_SOCKETS', 1000);
const SSE = positiveInt('BENCH_SSE', 1000);
const STORES = positiveInt('BENCH_STORES', 10);
const PHASE_MS = positiveInt('BENCH_PHASE_MS', 8000);
const RATES = [50, 100, 200, 400, 800, 1600, 3200, 6400];
const TOPIC = 'bench-item';
const PASSWORD = 'bench password 1234';
// Whole run: past it the bench stops and says so.
const DEADLINE_MS = 10 * 60_000;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 100_000) throw new Error(`${name} must be an integer from 1 to 100000`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Client process: opens the connections, counts deliveries per phase with a latency histogram.

interface Setup {
  base: string;
  floor: string;
  stores: { codename: string; storeId: string; token: string }[];
}

type ToClients = { kind: 'open'; setup: Setup } | { kind: 'openFloor'; setup: Setup } | { kind: 'report'; phase: string } | { kind: 'closeAll' };
type FromClients = { kind: 'ready'; opened: number; failed: number } | { kind: 'report'; phase: string; count: number; hist: number[] } | { kind: 'closed' };

const HIST_MS = 10_000; // 1 ms buckets; later ones land in the last

async function clientMain(): Promise<void> {
  const phases = new Map<string, { count: number; hist: number[] }>();
  const sockets: Socket[] = [];
  const streams: http.ClientRequest[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const record = (packet: { data?: { phase?: string; sentAt?: number } }) => {
    const phase = packet?.data?.phase;
    if (!phase) return;
    let p = phases.get(phase);
    if (!p) phases.set(phase, (p = { count: 0, hist: new Array(HIST_MS + 1).fill(0) }));
    p.count++;
    p.hist[Math.min(HIST_MS, Math.max(0, Math.round(Date.now() - packet.data!.sentAt!)))]++;
  };
  const send = (m: FromClients) => process.send!(m);

  const inBatches = async (count: number, open: (i: number) => Promise<void>) => {
    let failed = 0;
    for (let i = 0; i < count; i += 50) {
      const batch = Array.from({ length: Math.min(50, count - i) }, (_, k) => open(i + k).catch(() => void failed++));
      await Promise.all(batch);
    }
    return failed;
  };

  const openSocket = (url: string, opts: Record<string, unknown>, onReady: (s: Socket) => Promise<void>) =>
    new Promise<void>((resolve, reject) => {
      const s = ioClient(url, { transports: ['websocket'], reconnection: false, forceNew: true, ...opts });
      sockets.push(s);
      s.on('event', record);
      s.once('connect', () => onReady(s).then(resolve, reject));
      s.once('connect_error', reject);
    });

  process.on('message', async (m: ToClients) => {
    if (m.kind === 'open') {
      const { base, stores } = m.setup;
      let failed = await inBatches(SOCKETS, (i) => {
        const store = stores[i % stores.length];
        return openSocket(`${base}/events/bench`, { auth: { token: `Bearer ${store.token}`, tenantCodename: store.codename } }, (s) =>
          new Promise((resolve, reject) => {
            s.once('subscribed', (r: { topics: string[] }) => (r.topics.length ? resolve() : reject(new Error('rejected'))));
            s.emit('subscribe', { topics: ['item'] });
          }),
        );
      });
      failed += await inBatches(SSE, (i) => {
        const store = stores[i % stores.length];
        return new Promise<void>((resolve, reject) => {
          const req = http.get(`${base}/events/bench-sse/stream?topics=item`, { agent, headers: { Authorization: `Bearer ${store.token}`, 'svc-store-codename': store.codename } }, (res) => {
            if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
            let buffer = '';
            let ready = false;
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              buffer += chunk;
              let cut;
              while ((cut = buffer.indexOf('\n\n')) >= 0) {
                const block = buffer.slice(0, cut);
                buffer = buffer.slice(cut + 2);
                if (block.startsWith('event: subscribed')) {
                  ready = true;
                  resolve();
                } else if (block.startsWith('event: event')) record(JSON.parse(block.slice(block.indexOf('data: ') + 6)));
              }
            });
            res.on('error', () => (ready ? undefined : reject(new Error('stream error'))));
          });
          streams.push(req);
          req.on('error', reject);
        });
      });
      send({ kind: 'ready', opened: SOCKETS + SSE - failed, failed });
    } else if (m.kind === 'openFloor') {
      // As many receivers as the channel had (its Socket.IO and SSE clients), spread over the stores alike.
      const { floor, stores } = m.setup;
      const failed = await inBatches(SOCKETS + SSE, (i) => openSocket(floor, { query: { store: String(i % stores.length) } }, async () => undefined));
      send({ kind: 'ready', opened: SOCKETS + SSE - failed, failed });
    } else if (m.kind === 'report') {
      const p = phases.get(m.phase) ?? { count: 0, hist: [] };
      send({ kind: 'report', phase: m.phase, count: p.count, hist: p.hist });
    } else if (m.kind === 'closeAll') {
      for (const s of sockets.splice(0)) s.close();
      for (const r of streams.splice(0)) r.destroy();
      send({ kind: 'closed' });
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Service process: the app, the driver, the measurements.

class Clients {
  private readonly waiting: ((m: FromClients) => void)[] = [];
  constructor(readonly child: ChildProcess) {
    child.on('message', (m: FromClients) => this.waiting.shift()?.(m));
  }
  ask<T extends FromClients>(m: ToClients, timeoutMs = 120_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`clients did not answer ${m.kind} in ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push((reply) => {
        clearTimeout(timer);
        resolve(reply as T);
      });
      this.child.send(m);
    });
  }
}

interface PhaseResult {
  label: string;
  rate: number;
  elapsedMs: number;
  sent: number;
  expected: number;
  delivered: number;
  deliveriesPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  cpuUsPerDelivery: number;
}

function percentile(hist: number[], total: number, p: number): number {
  let seen = 0;
  for (let ms = 0; ms < hist.length; ms++) {
    seen += hist[ms];
    if (seen >= total * p) return ms;
  }
  return hist.length;
}

// Sends `rate` events/s for PHASE_MS, each to one store in turn; waits a moment for stragglers.
async function phase(clients: Clients, label: string, rate: number, perStore: number, publish: (phase: string, i: number) => void): Promise<PhaseResult> {
  const name = `${label}-${rate}-${Math.random().toString(36).slice(2, 8)}`;
  const total = Math.round((rate * PHASE_MS) / 1000);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    publish(name, i);
    if (i % 50 === 0) await new Promise((r) => setImmediate(r)); // let deliveries run
  }
  const expected = total * perStore;
  // Until every delivery arrived, or nothing more arrives for a second; the phase lasts until
  // the last delivery seen.
  let report = await clients.ask<Extract<FromClients, { kind: 'report' }>>({ kind: 'report', phase: name });
  let lastChange = performance.now();
  const giveUp = started + PHASE_MS * 2;
  while (report.count < expected && performance.now() - lastChange < 1000 && performance.now() < giveUp) {
    await new Promise((r) => setTimeout(r, 50));
    const next = await clients.ask<Extract<FromClients, { kind: 'report' }>>({ kind: 'report', phase: name });
    if (next.count !== report.count) lastChange = performance.now();
    report = next;
  }
  const elapsedMs = lastChange - started;
  const used = process.cpuUsage(cpu);
  return {
    label,
    rate,
    elapsedMs,
    sent: total,
    expected,
    delivered: report.count,
    deliveriesPerSec: Math.round(report.count / (Math.max(elapsedMs, PHASE_MS) / 1000)),
    p50: percentile(report.hist, report.count, 0.5),
    p95: percentile(report.hist, report.count, 0.95),
    p99: percentile(report.hist, report.count, 0.99),
    cpuUsPerDelivery: report.count ? Math.round(((used.user + used.system) / report.count) * 10) / 10 : 0,
  };
}

// Kept up: (nearly) everything delivered, drained within a second of the last publish, and
// latency not piling up.
const keptUp = (r: PhaseResult) => r.delivered >= r.expected * 0.99 && r.elapsedMs <= PHASE_MS + 1000 && r.p95 < 1000;

function print(r: PhaseResult): void {
  console.log(
    `  ${r.label.padEnd(22)} ${String(r.rate).padStart(5)} ev/s  delivered ${String(r.delivered).padStart(8)}/${String(r.expected).padEnd(8)} ${String(r.deliveriesPerSec).padStart(7)} deliveries/s  p50 ${r.p50} ms  p95 ${r.p95} ms  p99 ${r.p99} ms  cpu ${r.cpuUsPerDelivery} µs/delivery${keptUp(r) ? '' : '  (fell behind)'}`,
  );
}

async function mainService(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error(`bench:events: stopped at the ${DEADLINE_MS / 60000} min deadline`);
    process.exit(2);
  }, DEADLINE_MS);
  deadline.unref();
  const redisUrl = process.env.REDIS_URL;
  const running: RunningApp = await createApp({
    env: { NODE_ENV: 'development', LOG_LEVEL: 'silent', DATA_DIR: ':memory:', BCRYPT_COST: '4', REDIS_URL: redisUrl, SERVICE_CODENAME: 'bench' },
    settings: {
      rateLimits: { registration: { points: 1_000_000, durationSeconds: 1 }, loginPerIp: { points: 1_000_000, durationSeconds: 1 }, loginPerUsername: { points: 1_000_000, durationSeconds: 1 } },
      dataObjectAccess: [{ name: 'benchItem', accessLevel: 'accessProtected', hasOwnerField: false }],
      eventSubscriptions: [
        { name: 'bench', description: '', transport: 'websocket', topics: [{ name: 'item', dataObjectName: 'benchItem', topic: TOPIC, description: '' }], auth: { absoluteRoles: [] } },
        { name: 'bench-sse', description: '', transport: 'sse', topics: [{ name: 'item', dataObjectName: 'benchItem', topic: TOPIC, description: '' }], auth: { absoluteRoles: [] } },
      ],
      eventChannel: { clientBufferLimit: 5000 },
    } as never,
  });
  const child = fork(fileURLToPath(import.meta.url), ['clients'], { stdio: 'inherit' });
  const clients = new Clients(child);
  const floorHttp = http.createServer();
  try {
    await running.app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${(running.app.getHttpServer().address() as AddressInfo).port}`;
    const api = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, any>;
    };
    const stores: Setup['stores'] = [];
    for (let i = 0; i < STORES; i++) {
      const email = `bench-owner-${i}-${Date.now()}@example.com`;
      const reg = await api('/auth-api/v1/registerstoreowner', { email, password: PASSWORD, fullname: `Owner ${i}`, store: { name: `Bench Store ${i} ${Date.now()}` } });
      const codename = reg.store.codename as string;
      const l = await api('/auth-api/login', { username: email, password: PASSWORD }, { 'svc-store-codename': codename });
      stores.push({ codename, storeId: reg.store.id, token: l.accessToken });
    }
    await new Promise<void>((r) => floorHttp.listen(0, '127.0.0.1', r));
    const floorServer = new IoServer(floorHttp, { transports: ['websocket'] });
    floorServer.on('connection', (s) => void s.join(`store-${String(s.handshake.query.store)}`));
    const setup: Setup = { base, floor: `http://127.0.0.1:${(floorHttp.address() as AddressInfo).port}`, stores };

    console.log(`Event channel: ${SOCKETS} Socket.IO + ${SSE} SSE clients over ${STORES} stores, tenant-filtered topic, broker ${redisUrl ? 'Redis Streams' : 'in-memory'}, ${PHASE_MS / 1000} s per phase`);
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const opened = await clients.ask<Extract<FromClients, { kind: 'ready' }>>({ kind: 'open', setup }, 300_000);
    await new Promise((r) => setTimeout(r, 1000));
    global.gc?.();
    const rssAfter = process.memoryUsage().rss;
    console.log(`  connections: ${opened.opened} open, ${opened.failed} failed; service RSS ${mb(rssBefore)} → ${mb(rssAfter)} MB: ${mb(((rssAfter - rssBefore) / Math.max(1, opened.opened)) * 1000)} MB per 1,000 idle connections`);

    const publisher = running.app.get(EventPublisher);
    const perStore = (SOCKETS + SSE) / STORES; // each event goes to one store's clients
    const blob = 'x'.repeat(200); // a user-sized payload
    const channelPublish = (name: string, i: number) => {
      const store = stores[i % STORES];
      void publisher.publish(TOPIC, { id: `item-${i}`, storeId: store.storeId, phase: name, sentAt: Date.now(), note: blob });
    };
    console.log('Event channel (Socket.IO + SSE):');
    // Warm-up (JIT, buffers, first GC after the connections), not reported.
    await phase(clients, 'warm-up', 20, perStore, channelPublish);
    const at20 = await phase(clients, 'channel', 20, perStore, channelPublish);
    print(at20);
    let best: PhaseResult | undefined;
    for (const rate of RATES) {
      const r = await phase(clients, 'channel', rate, perStore, channelPublish);
      print(r);
      if (!keptUp(r)) break;
      best = r;
    }
    await clients.ask({ kind: 'closeAll' });

    // Floor: a bare Socket.IO server, one room per store, one broadcast per event, to as many
    // clients per store as the channel served: same fan-out per event on both sides.
    await new Promise((r) => setTimeout(r, 1000));
    const floorOpened = await clients.ask<Extract<FromClients, { kind: 'ready' }>>({ kind: 'openFloor', setup }, 300_000);
    console.log(`Floor (raw Socket.IO room broadcast, ${floorOpened.opened} clients):`);
    const floorPerStore = (SOCKETS + SSE) / STORES;
    const floorPublish = (name: string, i: number) => {
      floorServer.to(`store-${i % STORES}`).emit('event', { topic: 'item', name: 'item', data: { id: `item-${i}`, storeId: stores[i % STORES].storeId, phase: name, sentAt: Date.now(), note: blob } });
    };
    let floorBest: PhaseResult | undefined;
    await phase(clients, 'warm-up', 20, floorPerStore, floorPublish);
    for (const rate of RATES) {
      const r = await phase(clients, 'floor', rate, floorPerStore, floorPublish);
      print(r);
      if (!keptUp(r)) break;
      floorBest = r;
    }
    await clients.ask({ kind: 'closeAll' });
    floorServer.close();

    console.log('Summary:');
    console.log(`  at 20 events/s: ${at20.deliveriesPerSec} deliveries/s, p50/p95/p99 ${at20.p50}/${at20.p95}/${at20.p99} ms (target p95 < 50 ms: ${at20.p95 < 50 ? 'met' : 'NOT met'}), ${at20.cpuUsPerDelivery} µs CPU per delivery`);
    if (best && floorBest) {
      // Deliveries/s over the same fan-out (perStore clients per event on both sides).
      const ratio = best.deliveriesPerSec / floorBest.deliveriesPerSec;
      console.log(`  highest sustained (${perStore} receivers per event on both): channel ${best.rate} events/s = ${best.deliveriesPerSec} deliveries/s (p95 ${best.p95} ms, ${best.cpuUsPerDelivery} µs CPU/delivery); floor ${floorBest.rate} events/s = ${floorBest.deliveriesPerSec} deliveries/s; ratio ${ratio.toFixed(2)} (target ≥ 0.5: ${ratio >= 0.5 ? 'met' : 'NOT met'})`);
    } else {
      console.log(`  highest sustained: channel ${best ? `${best.rate} events/s` : 'below the first step'}, floor ${floorBest ? `${floorBest.rate} events/s` : 'below the first step'}`);
    }
  } finally {
    child.kill();
    floorHttp.close();
    await running.close();
  }
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

if (process.argv[2] === 'clients') {
  void clientMain();
} else {
  mainService().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
