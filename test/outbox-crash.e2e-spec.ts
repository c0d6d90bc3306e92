import { afterAll, describe, expect, it } from '@jest/globals';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { FromOutboxService, OutboxServiceOptions, ToOutboxService } from './fixtures/outbox-service.js';
import { PASSWORD, unique, uniqueEmail } from './helpers.js';

// Domain events are durable: a service that committed changes is killed (SIGKILL, no shutdown)
// before delivering their events, and the service started again on the same database delivers
// every one of them, each with its id. The first process holds every delivery (a DispatchHold
// bound by the fixture, test/fixtures/outbox-service.ts), so the kill always falls between the
// commits and the deliveries. Embedded database (a data directory of its own) by default;
// PostgreSQL (a fresh database on the DATABASE_URL server, so that no other file's service sweeps
// these events) and Redis when set.

const FIXTURE = fileURLToPath(new URL('./fixtures/outbox-service.ts', import.meta.url));
const RUN_TS = fileURLToPath(new URL('./fixtures/run-ts.mjs', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REGISTRATIONS = 12;

async function until<T>(what: string, ms: number, probe: () => T | undefined | false, output: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}\n--- service output ---\n${output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The service in its child process, driven over IPC.
class Service {
  readonly child: ChildProcess;
  readonly received: FromOutboxService[] = [];
  private output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(options: OutboxServiceOptions) {
    this.child = fork(FIXTURE, [JSON.stringify(options)], {
      execArgv: ['--import', RUN_TS, '--enable-source-maps'],
      env: { ...process.env, NODE_OPTIONS: '' }, // not Jest's --experimental-vm-modules
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child.on('message', (m: FromOutboxService) => this.received.push(m));
    this.child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  async ready(): Promise<string> {
    const ready = await until('the service to listen', 120_000, () => this.received.find((m) => m.type === 'ready' || m.type === 'error'), () => this.output);
    if (ready.type !== 'ready') throw new Error(`the service failed: ${JSON.stringify(ready)}\n${this.output.slice(-4000)}`);
    return ready.url;
  }

  of<T extends FromOutboxService['type']>(type: T): Extract<FromOutboxService, { type: T }>[] {
    return this.received.filter((m): m is Extract<FromOutboxService, { type: T }> => m.type === type);
  }

  log(): string {
    return this.output;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.send({ type: 'stop' } satisfies ToOutboxService);
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([this.exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 15_000)))]);
    clearTimeout(timer);
    if (!stopped) this.child.kill('SIGKILL');
  }
}

// A database of its own: a new one on the DATABASE_URL server, else the embedded one in a folder.
async function freshDatabase(dir: string): Promise<{ options: Pick<OutboxServiceOptions, 'databaseUrl' | 'dataDir'>; drop(): Promise<void> }> {
  if (!process.env.DATABASE_URL) return { options: { dataDir: join(dir, 'data') }, drop: async () => undefined };
  const name = `outbox_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    options: { databaseUrl: url.href, dataDir: ':memory:' },
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    },
  };
}

describe('domain events of a service killed (SIGKILL) between their commits and their delivery', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-outbox-'));
  const services: Service[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  afterAll(async () => {
    for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await Promise.all(services.map((s) => s.exited));
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('are all delivered by the service started again: each event at least once, with its id, none lost', async () => {
    database = await freshDatabase(dir);
    const serviceCodename = unique('outbox');
    const start = (hold: boolean) => {
      const service = new Service({ ...database!.options, redisUrl: process.env.REDIS_URL, serviceCodename, hold });
      services.push(service);
      return service;
    };

    const first = start(true);
    const url = await first.ready();
    // Each registration commits a store, its owner and their two events: store.created, user.created.
    const expected: { name: string; key: string }[] = [];
    for (let i = 0; i < REGISTRATIONS; i++) {
      const res = await fetch(`${url}/auth-api/v1/registerstoreowner`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: uniqueEmail(), password: PASSWORD, fullname: 'Durable Owner', store: { name: unique('Outbox ') } }),
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { store: { id: string }; user: { id: string } };
      expected.push({ name: 'store.created', key: body.store.id }, { name: 'user.created', key: body.user.id });
    }
    // Committed (answered 201), and held: nothing delivered, nothing on the broker.
    expect(first.of('delivered')).toEqual([]);
    expect(first.of('published')).toEqual([]);
    const exited = first.exited;
    first.child.kill('SIGKILL');
    expect(await exited).toEqual({ code: null, signal: 'SIGKILL' });

    const second = start(false);
    await second.ready();
    const keyOf = (m: { name: string; payload: Record<string, unknown> }) => String(m.name === 'store.created' ? m.payload.storeId : m.payload.userId);
    const wanted = new Set(expected.map((e) => `${e.name} ${e.key}`));
    const mine = () => second.of('delivered').filter((m) => wanted.has(`${m.name} ${keyOf(m)}`));
    await until(`the ${expected.length} events`, 60_000, () => new Set(mine().map((m) => `${m.name} ${keyOf(m)}`)).size === expected.length, () => second.log());

    // Every event at least once, each with an id of its own, the same on every delivery of it.
    const delivered = mine();
    for (const m of delivered) expect(m.id).toMatch(UUID);
    const idsByEvent = new Map<string, Set<string>>();
    for (const m of delivered) idsByEvent.set(`${m.name} ${keyOf(m)}`, (idsByEvent.get(`${m.name} ${keyOf(m)}`) ?? new Set()).add(m.id));
    expect([...idsByEvent.keys()].sort()).toEqual([...wanted].sort());
    expect([...idsByEvent.values()].every((ids) => ids.size === 1)).toBe(true);
    expect(new Set(delivered.map((m) => m.id)).size).toBe(expected.length);

    // The broker's messages carry the same ids (EventBridge publishes each delivery).
    const userEvents = delivered.filter((m) => m.name === 'user.created');
    await until('the user-created messages', 30_000, () => userEvents.every((e) => second.of('published').some((p) => p.id === e.id)), () => second.log());
    for (const e of userEvents) {
      const message = second.of('published').find((p) => p.id === e.id)!;
      expect(message).toMatchObject({ topic: `${serviceCodename}-user-created`, data: { id: e.payload.userId } });
    }
    await second.stop();
  }, 240_000);
});
