import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, Service, until } from './fixtures/service-process.js';
import { PASSWORD, unique, uniqueEmail } from './helpers.js';

// Domain events are durable: a service that committed changes is killed (SIGKILL, no shutdown)
// before delivering their events, and the service started again on the same database delivers
// every one of them, each with its id. The first process holds every delivery (a DispatchHold
// bound by the fixture, test/fixtures/outbox-service.ts), so the kill always falls between the
// commits and the deliveries. Embedded database (a data directory of its own) by default;
// PostgreSQL (a fresh database on the DATABASE_URL server, so that no other file's service sweeps
// these events) and Redis when set.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REGISTRATIONS = 12;

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
