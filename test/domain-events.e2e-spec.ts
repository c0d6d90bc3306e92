import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Global, Injectable, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Broker, type BrokerMessage } from '../src/delivery/broker/broker.js';
import { DomainEventDispatcher } from '../src/kernel/domain-event-dispatcher.js';
import { DomainEvents, OnDomainEvent, type DomainEvent } from '../src/kernel/domain-events.js';
import { Transactions } from '../src/platform/database/transactions.js';
import { login, PASSWORD, registerStore, startApp, unique, uniqueEmail, waitFor, type TestApp } from './helpers.js';

// The outbox of domain events (docs/events.md#domain-events-and-the-outbox): written in the
// change's transaction, delivered after the commit to every `@OnDomainEvent` listener and, by
// EventBridge, to the broker, each delivery with the event's stable id; delivered again until
// every listener took it; swept by one replica at a time; pruned after the retention.
// The apps here share a SERVICE_CODENAME of their own: their sweeps take only their own events.

const HEADER = 'svc-store-codename';

// An extension's listener, as any module's: records what it gets, and refuses the events of the
// stores it is told to (once each), as a listener whose database is away would.
@Injectable()
class Probe {
  readonly got: DomainEvent[] = [];
  readonly refuseOnce = new Set<string>();

  @OnDomainEvent('user.created', 'store.created')
  created(event: DomainEvent<'user.created' | 'store.created'>): void {
    this.got.push(event);
    if (this.refuseOnce.delete(event.storeId)) throw new Error('listener unavailable');
  }

  @OnDomainEvent('session.ended')
  ended(event: DomainEvent<'session.ended'>): void {
    this.got.push(event);
  }

  of(storeId: string): DomainEvent[] {
    return this.got.filter((e) => e.storeId === storeId);
  }
}

@Global()
@Module({ providers: [Probe], exports: [Probe] })
class ProbeModule {}

describe('domain events through the outbox', () => {
  const service = unique('outbox');
  let a: TestApp;
  let b: TestApp;
  let db: DataSource;

  const start = () =>
    startApp({
      env: { SERVICE_CODENAME: service },
      // Sweeps only when a test asks (and at boot); a writer's hold on its events is a second.
      settings: { domainEvents: { sweepSeconds: 3600, leaseSeconds: 1, retentionHours: 1 } },
      imports: [ProbeModule],
    });

  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
    db = a.app.get(DataSource);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const rows = (storeId: string) =>
    db.query<{ id: string; name: string; payload: Record<string, unknown>; attempts: number; dispatchedAt: Date | null }[]>(
      'SELECT "id", "name", "payload", "attempts", "dispatchedAt" FROM "domain_event_outbox" WHERE "storeId" = $1 ORDER BY "createdAt", "name"',
      [storeId],
    );

  it('a change writes its events in its transaction; they reach the listeners and the broker after the commit, each delivery with the event\'s id', async () => {
    const broker = a.app.get(Broker);
    const published: BrokerMessage[] = [];
    const stop = await broker.subscribe(`${service}-user-created`, (m) => void published.push(m));
    try {
      const store = await registerStore(a.http);
      const probe = a.app.get(Probe);
      // (The shipped welcome rule answers user.created with a notification: a third event.)
      const stored = await waitFor('both events marked delivered', async () => {
        const r = (await rows(store.storeId)).filter((e) => e.name !== 'notification.created');
        return r.length === 2 && r.every((e) => e.dispatchedAt) ? r : undefined;
      });
      expect(stored.map((e) => [e.name, e.payload])).toEqual([
        ['store.created', { storeId: store.storeId, ownerId: store.ownerId }],
        ['user.created', { userId: store.ownerId, storeId: store.storeId }],
      ]);
      expect(probe.of(store.storeId).filter((e) => e.name !== 'session.ended').map((e) => ({ id: e.id, name: e.name, payload: e.payload }))).toEqual(stored.map((e) => ({ id: e.id, name: e.name, payload: e.payload })));
      const userCreated = stored.find((e) => e.name === 'user.created')!;
      const message = await waitFor('the broker message', () => published.find((m) => m.data.storeId === store.storeId));
      expect(message).toMatchObject({ id: userCreated.id, data: { id: store.ownerId, storeId: store.storeId, _owner: store.ownerId } });
      // Delivered by its writer: the other replica's listeners never had it.
      expect(b.app.get(Probe).of(store.storeId)).toEqual([]);
    } finally {
      stop();
    }
  });

  it('a transaction that rolls back leaves no event and delivers none', async () => {
    const store = await registerStore(a.http);
    const before = a.app.get(Probe).of(store.storeId).length;
    await expect(
      a.app.get(Transactions).run(async (tx) => {
        await a.app.get(DomainEvents).emit('user.created', { userId: randomUUID(), storeId: store.storeId }, tx);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect((await rows(store.storeId)).filter((e) => e.name === 'user.created')).toHaveLength(1);
    expect(a.app.get(Probe).of(store.storeId)).toHaveLength(before);
  });

  it('a listener that fails has the event delivered again by a sweep, with the same id, until it takes it', async () => {
    const probe = a.app.get(Probe);
    const owner = await registerStore(a.http);
    // The next user of this store: its listener refuses the first delivery.
    probe.refuseOnce.add(owner.storeId);
    const res = await a.http.post('/auth-api/v1/registerstoreuser').set(HEADER, owner.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Retried' }).expect(201);
    const userId = res.body.user.id as string;
    const first = await waitFor('the first delivery', () => probe.of(owner.storeId).find((e) => e.name === 'user.created' && (e.payload as { userId: string }).userId === userId));
    const [row] = (await rows(owner.storeId)).filter((e) => e.id === first.id);
    expect(row.dispatchedAt).toBeNull();

    // Once its writer's hold (leaseSeconds) is over, a sweep of either replica takes it.
    await new Promise((r) => setTimeout(r, 1100));
    const swept = (await Promise.all([a.app.get(DomainEventDispatcher).sweep(), b.app.get(DomainEventDispatcher).sweep()])).reduce((x, y) => x + y, 0);
    expect(swept).toBeGreaterThanOrEqual(1);
    const deliveries = [...probe.of(owner.storeId), ...b.app.get(Probe).of(owner.storeId)].filter((e) => e.id === first.id);
    expect(deliveries).toHaveLength(2);
    expect(deliveries[1]).toEqual(first);
    expect((await rows(owner.storeId)).find((e) => e.id === first.id)).toMatchObject({ attempts: 1, dispatchedAt: expect.any(Date) });
  });

  it('replicas sweeping at once take different events: each is delivered once', async () => {
    const store = await registerStore(a.http);
    // Events whose writer died before delivering them: written, held long ago, never delivered.
    const ids: string[] = Array.from({ length: 150 }, () => randomUUID());
    await db.query(
      `INSERT INTO "domain_event_outbox" ("id", "service", "storeId", "name", "payload", "createdAt", "takenAt")
        SELECT id, $1, $2::uuid, 'user.created', jsonb_build_object('storeId', $2::text, 'userId', id::text), now() - interval '1 minute', now() - interval '1 minute'
        FROM unnest($3::uuid[]) AS id`,
      [service, store.storeId, ids],
    );
    const swept = await Promise.all([a, b].map((t) => t.app.get(DomainEventDispatcher).sweep()));
    expect(swept.reduce((x, y) => x + y, 0)).toBe(150);
    const delivered = [...a.app.get(Probe).of(store.storeId), ...b.app.get(Probe).of(store.storeId)].filter((e) => ids.includes(e.id));
    expect(delivered).toHaveLength(150);
    expect(new Set(delivered.map((e) => e.id)).size).toBe(150);
    expect((await rows(store.storeId)).filter((e) => ids.includes(e.id) && !e.dispatchedAt)).toEqual([]);
  });

  it('another deployment\'s events (another SERVICE_CODENAME) are left to it', async () => {
    const store = await registerStore(a.http);
    const id = randomUUID();
    await db.query(
      `INSERT INTO "domain_event_outbox" ("id", "service", "storeId", "name", "payload", "takenAt") VALUES ($1, $2, $3, 'user.created', $4, now() - interval '1 minute')`,
      [id, unique('other'), store.storeId, { storeId: store.storeId, userId: id }],
    );
    await a.app.get(DomainEventDispatcher).sweep();
    expect(a.app.get(Probe).got.some((e) => e.id === id)).toBe(false);
    expect((await rows(store.storeId)).find((e) => e.id === id)).toMatchObject({ attempts: 0, dispatchedAt: null });
    await db.query('DELETE FROM "domain_event_outbox" WHERE "id" = $1', [id]);
  });

  it('ended sessions are one event per user, written in the statement that deletes them', async () => {
    const store = await registerStore(a.http);
    const one = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    const two = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    await a.http.delete('/auth-api/sessions').set('authorization', `Bearer ${two.accessToken}`).set(HEADER, store.codename).expect(200);
    const ended = await waitFor('session.ended', () => a.app.get(Probe).of(store.storeId).find((e) => e.name === 'session.ended'));
    expect(ended.payload).toEqual({ storeId: store.storeId, userId: store.ownerId, sessionIds: [one.sessionId] });
    expect((await rows(store.storeId)).filter((e) => e.name === 'session.ended')).toEqual([expect.objectContaining({ id: ended.id, payload: ended.payload })]);
  });

  it('a login writes no event', async () => {
    const store = await registerStore(a.http);
    // The registration's events: the store, its owner, the welcome notification.
    const before = await waitFor('the welcome notification', async () => {
      const r = await rows(store.storeId);
      return r.some((e) => e.name === 'notification.created') ? r.length : undefined;
    });
    await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    expect(await rows(store.storeId)).toHaveLength(before);
  });

  it('delivered events go after the retention; undelivered ones stay', async () => {
    const store = await registerStore(a.http);
    const [old, pending] = [randomUUID(), randomUUID()];
    await db.query(
      `INSERT INTO "domain_event_outbox" ("id", "service", "storeId", "name", "payload", "takenAt", "dispatchedAt") VALUES
        ($1, $3, $4, 'user.created', '{}', now(), now() - interval '2 hours'),
        ($2, $3, $4, 'user.created', '{}', now() - interval '3 hours', NULL)`,
      [old, pending, unique('other'), store.storeId],
    );
    expect(await a.app.get(DomainEventDispatcher).prune()).toBeGreaterThanOrEqual(1);
    const left = (await rows(store.storeId)).map((e) => e.id);
    expect(left).not.toContain(old);
    expect(left).toContain(pending);
    await db.query('DELETE FROM "domain_event_outbox" WHERE "id" = $1', [pending]);
  });
});
