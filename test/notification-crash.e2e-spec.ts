import { afterAll, afterEach, beforeAll, expect, it } from '@jest/globals';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { EmbeddedPostgres } from '../src/platform/database/embedded-postgres.js';
import { NOTIFICATION_QUEUE as QUEUE_NAME } from '../src/delivery/notification/notification-queue.js';
import type { CrashPoint, FromWorker, ToWorker, WorkerOptions } from './fixtures/notification-worker.js';
import { describeWithRedis } from './conditions.js';

// Crash safety of notification delivery with real Redis (BullMQ): a replica dies in the middle
// of a job and another one takes the job over once its lock expires.
//  - dies after the provider accepted the message (the delivery is recorded, the job not yet
//    completed): the job runs again, finds the row delivered and sends nothing a second time;
//  - dies before sending: the job runs again and the message goes out once.
// The replicas are child processes running our application (test/fixtures/notification-worker.ts,
// loaded through test/fixtures/run-ts.mjs), so they can really die; the SMTP server that counts
// what arrives runs here.
//
// Only with REDIS_URL: the in-process queue keeps its jobs in the memory of the one process, so
// there is no other replica to take them over; the embedded run skips this file. The database
// is a fresh one for this file (a new database on the DATABASE_URL server, else an embedded
// PGlite served from this process): a worker's sweep enqueues every old queued row it finds, so
// on the shared test database the replicas here would take other files' rows (and deliver them
// with these settings), and other files' apps would take the row the third test ages.

const REDIS_URL = process.env.REDIS_URL;
const LOCK_MS = 1500;
const FIXTURE = fileURLToPath(new URL('./fixtures/notification-worker.ts', import.meta.url));
const RUN_TS = fileURLToPath(new URL('./fixtures/run-ts.mjs', import.meta.url));

// ------------------------------------------------------------------------------ helpers

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Messages the SMTP server accepted, by Message-ID (the provider sets it from the notification id).
interface MailServer {
  port: number;
  count(notificationId: string): number;
  close(): Promise<void>;
}

async function startMailServer(): Promise<MailServer> {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const head = Buffer.concat(chunks).toString('utf8').split(/\r?\n\r?\n/)[0];
        received.push(/^message-id:\s*<([^>]+)>/im.exec(head)?.[1] ?? '');
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    count: (id) => received.filter((m) => m === `${id}@notifications`).length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// A database of its own (see the top of the file), migrated by the first replica that boots.
async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const name = `crash_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    return {
      url: url.href,
      drop: async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.end();
      },
    };
  }
  const embedded = await EmbeddedPostgres.start(':memory:');
  return { url: embedded.url, drop: () => embedded.stop() };
}

// One replica: our application in a child process, driven over IPC.
class Replica {
  private readonly child: ChildProcess;
  private readonly inbox: FromWorker[] = [];
  private output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exit?: { code: number | null; signal: NodeJS.Signals | null };

  constructor(options: WorkerOptions) {
    this.child = fork(FIXTURE, [JSON.stringify(options)], {
      execArgv: ['--import', RUN_TS, '--enable-source-maps'],
      env: { ...process.env, NODE_OPTIONS: '' }, // not Jest's --experimental-vm-modules
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child.on('message', (m: FromWorker) => this.inbox.push(m));
    this.child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  // The next message of this type; fails at once if the process has ended without sending it.
  async next<T extends FromWorker['type']>(type: T, ms: number): Promise<Extract<FromWorker, { type: T }>> {
    try {
      return await until(`"${type}" from the replica`, ms, () => {
        const i = this.inbox.findIndex((m) => m.type === type || m.type === 'error');
        if (i >= 0) {
          const [m] = this.inbox.splice(i, 1);
          if (m.type === 'error') throw new Error(`replica: ${m.message}`);
          return m as Extract<FromWorker, { type: T }>;
        }
        if (this.exit) throw new Error(`the replica ended (${JSON.stringify(this.exit)}) without "${type}"`);
        return undefined;
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- replica output ---\n${this.output.slice(-4000)}`);
    }
  }

  send(message: ToWorker): void {
    this.child.send(message);
  }

  async stop(): Promise<void> {
    if (this.exit) return;
    this.send({ type: 'stop' });
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([this.exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 15_000)))]);
    clearTimeout(timer);
    if (!stopped) await this.kill();
  }

  async kill(): Promise<void> {
    if (this.exit) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

// ------------------------------------------------------------------------------ the tests

describeWithRedis('notification delivery survives a replica that dies (BullMQ on Redis)', 'BullMQ keeps its jobs there', () => {
  const serviceCodename = `crash-${randomBytes(5).toString('hex')}`;
  const prefix = `svc:${serviceCodename}:bull`;
  const replicas: Replica[] = [];
  let database: { url: string; drop(): Promise<void> };
  let db: pg.Client;
  let mail: MailServer;
  const connections: Redis[] = [];
  let queue: Queue;
  let events: QueueEvents;
  const seen: { event: string; jobId: string; failedReason?: string }[] = [];
  let rootStoreId: string;

  function replica(crash: CrashPoint | null): Replica {
    const r = new Replica({ databaseUrl: database.url, redisUrl: REDIS_URL!, serviceCodename, smtpPort: mail.port, lockDurationMs: LOCK_MS, crash });
    replicas.push(r);
    return r;
  }

  async function row(id: string) {
    const { rows } = await db.query<{ status: string; deliveredBy: string | null; attempts: { provider: string; outcome: string }[] }>(
      'SELECT status, "deliveredBy", attempts FROM notifications WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  beforeAll(async () => {
    [database, mail] = await Promise.all([freshDatabase(), startMailServer()]);
    // BullMQ leaves connections it is given open: they are closed in afterAll.
    connections.push(new Redis(REDIS_URL!, { maxRetriesPerRequest: null }), new Redis(REDIS_URL!, { maxRetriesPerRequest: null }));
    queue = new Queue(QUEUE_NAME, { connection: connections[0], prefix });
    events = new QueueEvents(QUEUE_NAME, { connection: connections[1], prefix });
    for (const event of ['active', 'stalled', 'completed', 'failed'] as const) {
      events.on(event, ({ jobId, failedReason }: { jobId: string; failedReason?: string }) => seen.push({ event, jobId, ...(failedReason && { failedReason }) }));
    }
    await events.waitUntilReady();
  }, 60_000);

  // A failed test leaves no replica behind to take the next test's job.
  afterEach(async () => {
    await Promise.all(replicas.splice(0).map((r) => r.kill()));
  });

  afterAll(async () => {
    await events?.close();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    for (const c of connections) c.disconnect(); // not quit(): it would wait out a blocking read
    await db?.end();
    await mail?.close();
    await database?.drop();
  }, 60_000);

  // The first replica migrates and seeds the fresh database; then the root store exists.
  async function firstReplica(crash: CrashPoint): Promise<Replica> {
    const r = replica(crash);
    await r.next('ready', 60_000);
    if (!db) {
      db = new pg.Client({ connectionString: database.url });
      await db.connect();
      rootStoreId = (await db.query<{ id: string }>(`SELECT id FROM stores WHERE codename = 'root'`)).rows[0].id;
    }
    return r;
  }

  async function jobState(id: string): Promise<string> {
    return queue.getJobState(id);
  }

  it('a replica dies after the provider accepted, before the job completed: the job runs again and sends nothing twice', async () => {
    const first = await firstReplica('after-recording');
    first.send({ type: 'send', storeId: rootStoreId, to: 'after@example.com', n: 1 });
    const { id } = await first.next('sent', 10_000);

    // It dies right after recording the delivery: the message is out, the job still active.
    const crash = await first.next('crashing', 20_000);
    expect(crash).toMatchObject({ at: 'after-recording', notificationId: id, recorded: true });
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(mail.count(id)).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'delivered', deliveredBy: 'crash-smtp' });
    expect(await jobState(id)).toBe('active');

    // Another replica takes the job once the dead one's lock has expired, and completes it.
    const second = replica(null);
    await second.next('ready', 60_000);
    await until('the job to be taken over and completed', 30_000, () => seen.some((e) => e.jobId === id && e.event === 'completed'));
    expect(seen.filter((e) => e.jobId === id).map((e) => e.event)).toEqual(['active', 'stalled', 'active', 'completed']);
    expect(await jobState(id)).toBe('unknown'); // completed jobs are removed

    expect(mail.count(id)).toBe(1);
    const stored = await row(id);
    expect(stored.status).toBe('delivered');
    expect(stored.attempts).toEqual([expect.objectContaining({ provider: 'crash-smtp', outcome: 'delivered' })]);
    await second.stop();
    expect((await second.exited).code).toBe(0);
  }, 150_000);

  it('a replica dies before sending: the message is sent once after another replica starts', async () => {
    const first = await firstReplica('before-sending');
    first.send({ type: 'send', storeId: rootStoreId, to: 'before@example.com', n: 2 });
    const { id } = await first.next('sent', 10_000);

    const crash = await first.next('crashing', 20_000);
    expect(crash).toMatchObject({ at: 'before-sending', notificationId: id });
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(mail.count(id)).toBe(0);
    expect(await row(id)).toMatchObject({ status: 'queued', attempts: [] });
    expect(await jobState(id)).toBe('active');

    const second = replica(null);
    await second.next('ready', 60_000);
    await until('the job to be taken over and completed', 30_000, () => seen.some((e) => e.jobId === id && e.event === 'completed'));
    expect(seen.filter((e) => e.jobId === id).map((e) => e.event)).toEqual(['active', 'stalled', 'active', 'completed']);
    expect(await jobState(id)).toBe('unknown');

    expect(mail.count(id)).toBe(1);
    const stored = await row(id);
    expect(stored).toMatchObject({ status: 'delivered', deliveredBy: 'crash-smtp' });
    expect(stored.attempts).toEqual([expect.objectContaining({ provider: 'crash-smtp', outcome: 'delivered' })]);
    await second.stop();
    expect((await second.exited).code).toBe(0);
  }, 150_000);
  // BullMQ fails a job whose worker died during it twice (maxStalledCount 1), without running
  // it: the row is still queued, and a sweep enqueues it again (one at start, then every minute,
  // of rows queued for more than a minute).
  it('a job whose replicas died twice is failed by BullMQ; its row stays queued and the next sweep sends it once', async () => {
    const first = await firstReplica('before-sending');
    first.send({ type: 'send', storeId: rootStoreId, to: 'twice@example.com', n: 3 });
    const { id } = await first.next('sent', 10_000);
    await first.next('crashing', 20_000);
    await first.exited;

    // The job is handed to the next replica, which dies at the same point.
    const second = replica('before-sending');
    await second.next('ready', 60_000);
    expect(await second.next('crashing', 30_000)).toMatchObject({ at: 'before-sending', notificationId: id });
    await second.exited;

    // The third finds the job stalled a second time: BullMQ fails it.
    const third = replica(null);
    await third.next('ready', 60_000);
    const failed = await until('BullMQ to fail the job', 30_000, () => seen.find((e) => e.jobId === id && e.event === 'failed'));
    expect(failed.failedReason).toBe('job stalled more than allowable limit');
    expect(await jobState(id)).toBe('unknown');
    expect(await row(id)).toMatchObject({ status: 'queued', attempts: [] });
    expect(mail.count(id)).toBe(0);
    await third.stop();

    // A minute later a sweep enqueues the row again (the row is aged here rather than waiting);
    // with the failed job kept, that enqueue would do nothing. It is delivered, once.
    await db.query(`UPDATE notifications SET "createdAt" = now() - interval '2 minutes' WHERE id = $1`, [id]);
    const fourth = replica(null);
    await fourth.next('ready', 60_000);
    await until('the notification to be delivered', 30_000, async () => (await row(id)).status === 'delivered');
    await until('the new job to complete', 10_000, () => seen.filter((e) => e.jobId === id && e.event === 'completed').length === 1);
    expect(mail.count(id)).toBe(1);
    expect((await row(id)).attempts).toEqual([expect.objectContaining({ provider: 'crash-smtp', outcome: 'delivered' })]);
    await fourth.stop();
    expect((await fourth.exited).code).toBe(0);
  }, 200_000);
});
