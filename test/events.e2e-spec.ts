import { readFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EventPublisher } from '../src/delivery/broker/event-publisher.js';
import { DAY_MS, ManualClock } from '../src/platform/clock/clock.js';
import { EventHub } from '../src/channels/events/event-hub.js';
import { EventsGateway } from '../src/channels/events/events.gateway.js';
import { connectSocket, listen, openSse, refusedSocket, type SocketClient, type SseClient } from './event-clients.js';
import { expectError, login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type RegisteredStore, type TestApp, updateStoreRow } from './helpers.js';

// The event channel end to end: real socket.io-client and SSE readers over loopback, events
// caused by real API calls (registrations, API keys, logouts).

const HEADER = 'svc-store-codename';
const shipped = JSON.parse(readFileSync(new URL('../config/settings.default.json', import.meta.url), 'utf8')) as { eventSubscriptions: unknown[] };

// The shipped example (live, live-sse) and a few made for these tests.
const settings = {
  dataObjectAccess: [{ name: 'order', accessLevel: 'accessProtected' as const, hasOwnerField: true }, { name: 'ticker', accessLevel: 'accessPublic' as const, hasOwnerField: false }],
  eventSubscriptions: [
    ...shipped.eventSubscriptions,
    {
      name: 'shaped',
      description: 'scripts',
      transport: 'websocket',
      topics: [{ name: 'bigOrder', dataObjectName: 'order', topic: 'order.created', description: '', payloadMapping: '{"orderId": data.id, "amount": data.amount, "storeId": data.storeId, "note": data.note}', excludeFields: ['note'] }],
      auth: { absoluteRoles: [], checkRoles: ['tenantOwner', 'tenantUser'], authScript: 'session.roleId != "tenantAdmin"', filterScript: 'data.amount >= 100' },
    },
    { name: 'ticks', description: '', transport: 'sse', topics: [{ name: 'tick', dataObjectName: 'ticker', topic: 'test-tick', description: '' }], auth: { absoluteRoles: [] } },
    { name: 'ticks-ws', description: '', transport: 'websocket', topics: [{ name: 'tick', dataObjectName: 'ticker', topic: 'test-tick', description: '' }], auth: { absoluteRoles: [] } },
  ],
} as never;

async function userOf(t: TestApp, store: RegisteredStore): Promise<{ id: string; email: string; token: string }> {
  const email = uniqueEmail();
  const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Store User' }).expect(201);
  const { accessToken } = await login(t.http, email, PASSWORD, store.codename);
  return { id: res.body.user.id, email, token: accessToken };
}

const bearer = (token: string) => `Bearer ${token}`;

async function subscribed(client: SocketClient, topics: unknown): Promise<any> {
  client.socket.emit('subscribe', { topics });
  return client.next('subscribed');
}


describe('event channel', () => {
  let t: TestApp;
  let base: string;
  const open: { close(): void }[] = [];
  const track = <T extends { close(): void }>(c: T): T => (open.push(c), c);

  beforeAll(async () => {
    t = await startApp({ settings });
    base = await listen(t);
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.close();
  });

  describe('the shipped example', () => {
    it('lets an anonymous client watch store registrations, and refuses it protected and private topics', async () => {
      const c = track(await connectSocket(base, 'live'));
      expect(await subscribed(c, ['storeCreated', 'userCreated', 'apiKeyCreated'])).toEqual({
        topics: ['storeCreated'],
        rejected: [{ topic: 'userCreated', reason: 'LoginRequired' }, { topic: 'apiKeyCreated', reason: 'LoginRequired' }],
      });
      const store = await registerStore(t.http);
      const e = await waitFor('the new store', () => c.events().find((x) => x.data.id === store.storeId));
      expect(e).toMatchObject({ topic: 'storeCreated', name: 'storeCreated', data: { codename: store.codename, storeId: store.storeId, _owner: store.ownerId } });
    });

    it('serves the same over SSE: `subscribed` first, then `event` messages as JSON', async () => {
      const s = track(await openSse(base, '/events/live-sse/stream?topics=storeCreated,userCreated'));
      expect(s.status).toBe(200);
      expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(await s.next('subscribed')).toEqual({ topics: ['storeCreated'], rejected: [{ topic: 'userCreated', reason: 'LoginRequired' }] });
      const store = await registerStore(t.http);
      expect(await waitFor('the store event', () => s.events().find((x) => x.data.id === store.storeId))).toMatchObject({ topic: 'storeCreated', name: 'storeCreated' });
    });
  });

  describe('tenancy and ownership', () => {
    it("a user registered in store A reaches store A's subscribers and never store B's", async () => {
      const a = await registerStore(t.http);
      const b = await registerStore(t.http);
      const ownerA = await login(t.http, a.ownerEmail, PASSWORD, a.codename);
      const ownerB = await login(t.http, b.ownerEmail, PASSWORD, b.codename);
      const sockA = track(await connectSocket(base, 'live', { token: bearer(ownerA.accessToken), tenantCodename: a.codename }));
      const sockB = track(await connectSocket(base, 'live', { token: bearer(ownerB.accessToken), tenantCodename: b.codename }));
      const sseA = track(await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(ownerA.accessToken), [HEADER]: a.codename }));
      const sseB = track(await openSse(base, `/events/live-sse/stream?topics=userCreated&_store=${b.codename}&access_token=${ownerB.accessToken}`));
      expect((await subscribed(sockA, ['userCreated'])).topics).toEqual(['userCreated']);
      expect((await subscribed(sockB, ['userCreated'])).topics).toEqual(['userCreated']);
      expect((await sseA.next('subscribed')).topics).toEqual(['userCreated']);
      expect((await sseB.next('subscribed')).topics).toEqual(['userCreated']);

      const inA = await userOf(t, a);
      const inB = await userOf(t, b); // B's own event comes after A's on the same topic
      for (const c of [sockA, sseA]) {
        const e = await waitFor('the user of A', () => c.events().find((x) => x.data.id === inA.id));
        expect(e).toMatchObject({ topic: 'userCreated', name: 'userCreated', data: { id: inA.id, email: inA.email, storeId: a.storeId, _owner: inA.id } });
        expect(JSON.stringify(e)).not.toMatch(/password/i);
      }
      for (const c of [sockB, sseB]) {
        await waitFor("B's own user", () => c.events().find((x) => x.data.id === inB.id));
        expect(c.events().map((x) => x.data.storeId)).toEqual([b.storeId]);
      }
    });

    it('a private object (an API key) reaches its owner and the store admins only, never its hash', async () => {
      const store = await registerStore(t.http);
      const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename); // tenantOwner: an admin role
      const holder = await userOf(t, store);
      const other = await userOf(t, store);
      const clients = {
        admin: track(await connectSocket(base, 'live', { token: bearer(owner.accessToken), tenantCodename: store.codename })),
        holder: track(await connectSocket(base, 'live', { token: bearer(holder.token), tenantCodename: store.codename })),
        other: track(await connectSocket(base, 'live', { token: bearer(other.token), tenantCodename: store.codename })),
      };
      for (const c of Object.values(clients)) expect((await subscribed(c, ['apiKeyCreated'])).topics).toEqual(['apiKeyCreated']);
      const res = await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', bearer(holder.token)).send({ name: 'job' }).expect(201);
      const key = res.body.apiKey;
      for (const c of [clients.admin, clients.holder]) {
        const e = await waitFor('the key event', () => c.events().find((x) => x.data.id === key.id));
        expect(e.data).toMatchObject({ id: key.id, prefix: key.prefix, userId: holder.id, storeId: store.storeId, _owner: holder.id });
        expect(JSON.stringify(e)).not.toContain(key.key);
        expect(Object.keys(e.data)).not.toContain('keyHash');
      }
      // the other user's own key comes later on the same topic; nothing of the holder's before it
      const own = (await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', bearer(other.token)).send({ name: 'mine' }).expect(201)).body.apiKey;
      await waitFor('its own key', () => clients.other.events().find((x) => x.data.id === own.id));
      expect(clients.other.events().map((x) => x.data.id)).toEqual([own.id]);
    });

    it('a token is good only for its own store', async () => {
      const a = await registerStore(t.http);
      const b = await registerStore(t.http);
      const ownerA = await login(t.http, a.ownerEmail, PASSWORD, a.codename);
      const refused = await refusedSocket(base, 'live', { token: bearer(ownerA.accessToken), tenantCodename: b.codename });
      expect(refused.message).toBe('errMsg_TenantMismatch');
      expect(refused.data).toEqual({ errCode: 'TenantMismatch', detail: 'the token was issued for another store' });
      const sse = await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(ownerA.accessToken), [HEADER]: b.codename });
      await waitFor('the body', () => (sse.ended ? true : undefined));
      expect(sse.status).toBe(403);
      expect(JSON.parse(sse.body)).toMatchObject({ errCode: 'TenantMismatch' });
    });
  });

  describe('connection refusals', () => {
    it('a bad token is a connect_error that says so; over SSE a 401', async () => {
      const refused = await refusedSocket(base, 'live', { token: 'Bearer not-a-token' });
      expect(refused.data).toEqual({ errCode: 'Unauthorized', detail: expect.stringMatching(/token/i) });
      expect(refused.message).toBe('errMsg_Unauthorized');
      const sse = await openSse(base, '/events/live-sse/stream?topics=storeCreated', { Authorization: 'Bearer not-a-token' });
      await waitFor('the body', () => (sse.ended ? true : undefined));
      expect(sse.status).toBe(401);
    });

    it('an unknown subscription is an invalid namespace; one of the other transport is named in the refusal', async () => {
      const refused = await refusedSocket(base, 'nope');
      expect(refused.message).toBe('Invalid namespace');
      const other = await refusedSocket(base, 'live-sse');
      expect(other.message).toBe('errMsg_SubscriptionNotFound');
      expect(other.data).toEqual({ errCode: 'SubscriptionNotFound', detail: 'event subscription "live-sse" is served over SSE' });
      const sse = await openSse(base, '/events/live/stream?topics=storeCreated');
      await waitFor('the body', () => (sse.ended ? true : undefined));
      expect(sse.status).toBe(404);
      expect(JSON.parse(sse.body)).toMatchObject({ errCode: 'SubscriptionNotFound' });
    });

    it('unknown subscription names leave no namespace behind on the server', async () => {
      const namespaces = (t.app.get(EventsGateway).namespace!.server as unknown as { _nsps: Map<string, unknown> })._nsps;
      const before = namespaces.size;
      const names = Array.from({ length: 50 }, (_, i) => `unknown-${Date.now()}-${i}`);
      const refusals = await Promise.all(names.map((name) => refusedSocket(base, name)));
      expect(refusals.map((r) => r.message)).toEqual(names.map(() => 'Invalid namespace'));
      expect(namespaces.size).toBe(before);
      for (const name of names) expect(namespaces.has(`/events/${name}`)).toBe(false);
    });

    it('SSE without topics, or with too many, is a 400', async () => {
      for (const query of ['', '?topics=', `?topics=${Array.from({ length: 10_000 }, (_, i) => `t${i}`).join(',')}`]) {
        const sse = await openSse(base, `/events/live-sse/stream${query}`);
        await waitFor('the body', () => (sse.ended ? true : undefined));
        expect(sse.status === 400 || sse.status === 431).toBe(true);
      }
    });
  });

  describe('bad input on a socket', () => {
    it.each([
      ['no body', undefined],
      ['topics not an array', { topics: 'storeCreated' }],
      ['non-string names', { topics: [1, { a: 1 }, null] }],
      ['an empty list', { topics: [] }],
      ['10,000 topics', { topics: Array.from({ length: 10_000 }, (_, i) => `t${i}`) }],
      ['an overlong name', { topics: ['x'.repeat(5000)] }],
    ])('%s gets an `error` and the connection goes on', async (_what, body) => {
      const c = track(await connectSocket(base, 'live'));
      const refusal = { message: 'errMsg_ValidationFailed', errCode: 'ValidationFailed', detail: expect.stringMatching(/topic/) };
      c.socket.emit('subscribe', body);
      expect(await c.next('error')).toEqual(refusal);
      c.socket.emit('unsubscribe', body);
      expect(await c.next('error')).toEqual(refusal);
      expect((await subscribed(c, ['storeCreated'])).topics).toEqual(['storeCreated']);
      expect(c.socket.connected).toBe(true);
    });
  });

  describe('subscribe and unsubscribe', () => {
    it('starts a broker consumer with the first subscriber of a topic here and stops it with the last', async () => {
      const hub = t.app.get(EventHub);
      const topic = 'test-tick';
      expect(hub.activeTopics()).not.toContain(topic);
      const one = track(await connectSocket(base, 'ticks-ws'));
      const two = track(await connectSocket(base, 'ticks-ws'));
      await subscribed(one, ['tick']);
      expect(hub.activeTopics()).toContain(topic);
      await subscribed(two, ['tick']);
      one.socket.emit('unsubscribe', { topics: ['tick'] });
      expect(await one.next('unsubscribed')).toEqual({ topics: ['tick'] });
      expect(hub.activeTopics()).toContain(topic);
      await t.app.get(EventPublisher).publish(topic, { n: 1 });
      await waitFor('the tick', () => two.events()[0]);
      two.close();
      await waitFor('the consumer to stop', () => (hub.activeTopics().includes(topic) ? undefined : true));
      expect(one.events()).toEqual([]);
    });

    it('reports rejected topics once and never delivers them', async () => {
      const store = await registerStore(t.http);
      const c = track(await connectSocket(base, 'live'));
      expect((await subscribed(c, ['storeCreated', 'userCreated'])).rejected).toEqual([{ topic: 'userCreated', reason: 'LoginRequired' }]);
      await userOf(t, store);
      const later = await registerStore(t.http);
      await waitFor('the later store', () => c.events().find((x) => x.data.id === later.storeId));
      expect(c.events().every((x) => x.topic === 'storeCreated')).toBe(true);
      expect(c.received.filter((r) => r.event === 'subscribed')).toHaveLength(1);
    });
  });

  describe('scripts', () => {
    it('checkRoles, authScript, filterScript, payloadMapping and excludeFields, over a real socket', async () => {
      const store = await registerStore(t.http);
      const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const user = await userOf(t, store);
      const anonymous = track(await connectSocket(base, 'shaped'));
      expect((await subscribed(anonymous, ['bigOrder'])).rejected).toEqual([{ topic: 'bigOrder', reason: 'RoleNotAllowed' }]);
      const c = track(await connectSocket(base, 'shaped', { token: bearer(user.token), tenantCodename: store.codename }));
      expect((await subscribed(c, ['bigOrder'])).topics).toEqual(['bigOrder']);
      const o = track(await connectSocket(base, 'shaped', { token: bearer(owner.accessToken), tenantCodename: store.codename }));
      expect((await subscribed(o, ['bigOrder'])).topics).toEqual(['bigOrder']);

      const publisher = t.app.get(EventPublisher);
      await publisher.publishApiEvent('order', 'created', { id: 'small', amount: 5, storeId: store.storeId, note: 'n' });
      await publisher.publishApiEvent('order', 'created', { id: 'broken', storeId: store.storeId }); // the filter throws: skipped
      await publisher.publishApiEvent('order', 'created', { id: 'big', amount: 250, storeId: store.storeId, note: 'secret note' });
      await waitFor('the big order', () => c.events()[0]);
      expect(c.events()).toEqual([{ topic: 'bigOrder', name: 'bigOrder', data: { orderId: 'big', amount: 250, storeId: store.storeId } }]);
      await waitFor('the owner too', () => o.events()[0]);
    });
  });

  describe('session loss', () => {
    it('logout ends the socket (error, then disconnect) and the SSE stream within a second', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const c = track(await connectSocket(base, 'live', { token: bearer(l.accessToken), tenantCodename: store.codename }));
      await subscribed(c, ['userCreated']);
      const s = track(await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(l.accessToken), [HEADER]: store.codename }));
      await s.next('subscribed');
      const started = Date.now();
      await t.http.post('/auth-api/logout').set(HEADER, store.codename).set('Authorization', bearer(l.accessToken)).expect(200);
      const ended = { message: 'errMsg_Unauthorized', errCode: 'Unauthorized', detail: 'your session has ended' };
      expect(await c.next('error', 1000)).toEqual(ended);
      expect(await c.next('disconnect', 1000)).toBe('io server disconnect');
      await waitFor('the stream to end', () => (s.ended ? true : undefined), 1000);
      expect(s.received.at(-1)).toEqual({ event: 'error', data: ended });
      expect(Date.now() - started).toBeLessThan(1500);
    });

    it('deactivating a user ends its streams; other users keep theirs', async () => {
      const store = await registerStore(t.http);
      const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const user = await userOf(t, store);
      const gone = track(await connectSocket(base, 'live', { token: bearer(user.token), tenantCodename: store.codename }));
      const stays = track(await connectSocket(base, 'live', { token: bearer(owner.accessToken), tenantCodename: store.codename }));
      await subscribed(gone, ['userUpdated']);
      await subscribed(stays, ['userUpdated']);
      await t.http.patch(`/auth-api/v1/users/${user.id}`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).send({ isActive: false }).expect(200);
      expect(await gone.next('error', 1000)).toEqual({ message: 'errMsg_Unauthorized', errCode: 'Unauthorized', detail: 'your session has ended' });
      const e = await waitFor('the update', () => stays.events().find((x) => x.data.id === user.id));
      expect(e.data).toMatchObject({ isActive: false });
      expect(stays.socket.connected).toBe(true);
    });
  });

  describe('deactivated store', () => {
    const deactivate = (id: string) => updateStoreRow([t], id, { isActive: false });

    it('opens no stream: connect_error / 403 StoreInactive for logins, API keys and anonymous clients', async () => {
      const store = await registerStore(t.http);
      const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const key = (await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).send({ name: 'listener' }).expect(201)).body.apiKey;
      await deactivate(store.storeId);
      for (const auth of [{ token: bearer(owner.accessToken), tenantCodename: store.codename }, { token: bearer(key.key) }, { tenantCodename: store.codename }]) {
        const refused = await refusedSocket(base, 'live', auth);
        expect(refused.message).toBe('errMsg_StoreInactive');
        expect(refused.data).toEqual({ errCode: 'StoreInactive', detail: expect.stringContaining('active') });
      }
      const credentials: Record<string, string>[] = [{ Authorization: bearer(owner.accessToken), [HEADER]: store.codename }, { Authorization: bearer(key.key) }, { [HEADER]: store.codename }];
      for (const headers of credentials) {
        const sse = await openSse(base, '/events/live-sse/stream?topics=storeCreated', headers);
        await waitFor('the body', () => (sse.ended ? true : undefined));
        expectError({ status: sse.status, body: JSON.parse(sse.body) }, 403, 'StoreInactive');
      }
    });

    it("ends the store's open streams (logins, keys, anonymous; socket and SSE) within a second; other stores keep theirs", async () => {
      const store = await registerStore(t.http);
      const other = await registerStore(t.http);
      const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const otherOwner = await login(t.http, other.ownerEmail, PASSWORD, other.codename);
      const key = (await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).send({ name: 'listener' }).expect(201)).body.apiKey;
      const sockets = [
        track(await connectSocket(base, 'live', { token: bearer(owner.accessToken), tenantCodename: store.codename })),
        track(await connectSocket(base, 'live', { token: bearer(key.key) })),
        track(await connectSocket(base, 'live', { tenantCodename: store.codename })),
      ];
      for (const c of sockets) await subscribed(c, ['storeCreated']);
      const s = track(await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(owner.accessToken), [HEADER]: store.codename }));
      await s.next('subscribed');
      const stays = track(await connectSocket(base, 'live', { token: bearer(otherOwner.accessToken), tenantCodename: other.codename }));
      await subscribed(stays, ['userCreated']);

      const started = Date.now();
      await deactivate(store.storeId);
      for (const c of sockets) {
        expect(await c.next('error', 1000)).toEqual({ message: 'errMsg_StoreInactive', errCode: 'StoreInactive', detail: 'the store is deactivated' });
        expect(await c.next('disconnect', 1000)).toBe('io server disconnect');
      }
      await waitFor('the stream to end', () => (s.ended ? true : undefined), 1000);
      expect(s.received.at(-1)).toEqual({ event: 'error', data: { message: 'errMsg_StoreInactive', errCode: 'StoreInactive', detail: 'the store is deactivated' } });
      expect(Date.now() - started).toBeLessThan(1500);
      const u = await userOf(t, other);
      await waitFor('the other store goes on', () => stays.events().find((x) => x.data.id === u.id));
      expect(stays.socket.connected).toBe(true);
    });
  });

  describe('API keys', () => {
    it('are accepted on both transports as on HTTP, and deleting the key ends the streams', async () => {
      const store = await registerStore(t.http);
      const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const key = (await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).send({ name: 'listener' }).expect(201)).body.apiKey;
      // No store named: the key's store is the tenant, as on HTTP.
      const c = track(await connectSocket(base, 'live', { token: bearer(key.key) }));
      expect((await subscribed(c, ['userCreated'])).topics).toEqual(['userCreated']);
      const s = track(await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(key.key) }));
      expect((await s.next('subscribed')).topics).toEqual(['userCreated']);
      const u = await userOf(t, store);
      await waitFor('the user over the socket', () => c.events().find((x) => x.data.id === u.id));
      await waitFor('the user over SSE', () => s.events().find((x) => x.data.id === u.id));
      await t.http.delete(`/auth-api/v1/apikeys/${key.id}`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).expect(200);
      expect(await c.next('error', 1000)).toEqual({ message: 'errMsg_Unauthorized', errCode: 'Unauthorized', detail: 'your session has ended' });
      await waitFor('the stream to end', () => (s.ended ? true : undefined), 1000);
      expect(s.received.at(-1)).toEqual({ event: 'error', data: { message: 'errMsg_Unauthorized', errCode: 'Unauthorized', detail: 'your session has ended' } });
    });
  });
});

describe('event channel limits', () => {
  let t: TestApp;
  let base: string;
  const clock = new ManualClock();
  const open: { close(): void }[] = [];
  beforeAll(async () => {
    t = await startApp({ clock, settings: { ...(settings as object), eventChannel: { clientBufferLimit: 20, heartbeatSeconds: 1 } } as never });
    base = await listen(t);
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.close();
  });

  it('sends an SSE heartbeat comment', async () => {
    const s = await openSse(base, '/events/ticks/stream?topics=tick');
    open.push(s);
    await waitFor('a heartbeat', () => (s.body.includes(': heartbeat\n\n') ? true : undefined), 3000);
  });

  it('drops a slow SSE reader with an `error` while a fast one gets every event', async () => {
    const hub = t.app.get(EventHub);
    const slow = await openSse(base, '/events/ticks/stream?topics=tick');
    const fast = await openSse(base, '/events/ticks/stream?topics=tick');
    open.push(slow, fast);
    await slow.next('subscribed');
    await fast.next('subscribed');
    const connected = hub.clientCount();
    slow.res.pause(); // reads nothing more
    const publisher = t.app.get(EventPublisher);
    const blob = 'x'.repeat(64 * 1024);
    const count = 300; // ~19 MB: far beyond what socket buffers hold
    let dropped = false;
    // At the pace the fast reader reads: the stalled one must not hold it back.
    for (let n = 0; n < count; n++) {
      await publisher.publish('test-tick', { n, blob });
      await waitFor(`event ${n} at the fast reader`, () => (fast.events().length > n ? true : undefined));
      if (!dropped && hub.clientCount() < connected) {
        dropped = true;
        slow.res.resume(); // now it reads what was left for it, the `error` last
      }
    }
    expect(dropped).toBe(true);
    expect(fast.events().map((e) => e.data.n)).toEqual(Array.from({ length: count }, (_, n) => n));
    await waitFor('the slow reader to be dropped', () => (slow.ended ? true : undefined), 10_000);
    const last = slow.received.at(-1)!;
    expect(last).toEqual({ event: 'error', data: { message: 'errMsg_EventReaderTooSlow', errCode: 'EventReaderTooSlow', detail: 'you are reading events too slowly; connect again' } });
    expect(slow.events().length).toBeLessThan(count);
  });

  it('drops a slow Socket.IO client with an `error` while a fast one gets every event', async () => {
    const slow = await connectSocket(base, 'ticks-ws');
    const fast = await connectSocket(base, 'ticks-ws');
    open.push(slow, fast);
    await subscribed(slow, ['tick']);
    await subscribed(fast, ['tick']);
    // The client's TCP socket stops reading, as a stalled mobile connection would.
    const raw = (slow.socket.io.engine.transport as unknown as { ws: { _socket: { pause(): void; resume(): void } } }).ws._socket;
    const hub = t.app.get(EventHub);
    const connected = hub.clientCount();
    raw.pause();
    const publisher = t.app.get(EventPublisher);
    const blob = 'x'.repeat(64 * 1024);
    const count = 300;
    let dropped = false;
    for (let n = 0; n < count; n++) {
      await publisher.publish('test-tick', { n, blob });
      await waitFor(`event ${n} at the fast client`, () => (fast.events().length > n ? true : undefined));
      if (!dropped && hub.clientCount() < connected) {
        dropped = true;
        raw.resume();
      }
    }
    expect(dropped).toBe(true);
    expect(fast.events().map((e) => e.data.n)).toEqual(Array.from({ length: count }, (_, n) => n));
    expect(await slow.next('error', 10_000)).toEqual({ message: 'errMsg_EventReaderTooSlow', errCode: 'EventReaderTooSlow', detail: 'you are reading events too slowly; connect again' });
    expect(slow.events().length).toBeLessThan(count);
  });

  it("keeps an API key's stream past the key's day-long validation, while the key stands", async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const key = (await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).send({ name: 'listener' }).expect(201)).body.apiKey;
    const c = await connectSocket(base, 'live', { token: bearer(key.key) });
    open.push(c);
    await subscribed(c, ['userCreated']);
    clock.advance(2 * DAY_MS);
    await new Promise((r) => setTimeout(r, 1200)); // two sweeps: the key is validated again
    const u = await userOf(t, store);
    await waitFor('the user after the validation', () => c.events().find((x) => x.data.id === u.id));
    expect(c.received.filter((r) => r.event === 'error')).toEqual([]);
  });

  // Last here: it moves this app's clock past every session's end.
  it("ends a stream when its session expires, without anyone logging out", async () => {
    const store = await registerStore(t.http);
    const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const c = await connectSocket(base, 'live', { token: bearer(l.accessToken), tenantCodename: store.codename });
    open.push(c);
    await subscribed(c, ['userCreated']);
    clock.advance(31 * DAY_MS); // tokenPeriodInDays is 30
    expect(await c.next('error', 1500)).toEqual({ message: 'errMsg_Unauthorized', errCode: 'Unauthorized', detail: 'your session has expired' });
  });
});

describe('event channel and second factors', () => {
  let t: TestApp;
  let base: string;
  const open: { close(): void }[] = [];
  const V = '/auth-api/verification-services';

  beforeAll(async () => {
    t = await startApp({
      settings: {
        ...(settings as object),
        secondaryIdentifierPresence: 'optional',
        email2FARequiredForLogin: true,
        mobile2FARequiredForLogin: true,
        verification: { verificationMode: 'testMode', flows: { 'email-2factor-verification': { enabled: true }, 'mobile-2factor-verification': { enabled: true } } },
      } as never,
    });
    base = await listen(t);
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.close();
  });

  // The completed factor's fresh access token (the pending sign-in's one only finishes it).
  async function secondFactor(codename: string, factor: 'email' | 'mobile', token: string): Promise<string> {
    const flow = `${V}/${factor}-2factor-verification`;
    const code = (await t.http.post(`${flow}/start`).set(HEADER, codename).set('Authorization', bearer(token)).send({}).expect(200)).body.secretCode;
    const done = await t.http.post(`${flow}/complete`).set(HEADER, codename).set('Authorization', bearer(token)).send({ secretCode: code });
    // A refusal shows its errCode (a bare 403 did not say which one it was).
    expect([factor, done.status, done.body.errCode]).toEqual([factor, 200, undefined]);
    return done.body.accessToken as string;
  }

  async function refusedSse(token: string, codename: string): Promise<SseClient> {
    const sse = await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(token), [HEADER]: codename });
    await waitFor('the body', () => (sse.ended ? true : undefined));
    return sse;
  }

  it('a login with its email factor pending subscribes to nothing until the factor is done; its API key is not held back', async () => {
    const store = await registerStore(t.http);
    const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect(l.body.sessionNeedsEmail2FA).toBe(true);
    const refused = await refusedSocket(base, 'live', { token: bearer(l.accessToken), tenantCodename: store.codename });
    expect(refused.message).toBe('errMsg_getEventsByNameRequiresEmail2FA');
    expect(refused.data).toEqual({ errCode: 'EmailTwoFactorNeeded', detail: 'complete the email second factor first' });
    const sse = await refusedSse(l.accessToken, store.codename);
    expectError({ status: sse.status, body: JSON.parse(sse.body) }, 403, 'EmailTwoFactorNeeded');
    expect(JSON.parse(sse.body).message).toBe('errMsg_getEventsByNameStreamRequiresEmail2FA');

    const done = await secondFactor(store.codename, 'email', l.accessToken);
    // the pending sign-in's token finished it and subscribes to nothing; the answer's does
    expect((await refusedSocket(base, 'live', { token: bearer(l.accessToken), tenantCodename: store.codename })).data).toMatchObject({ errCode: 'AccessTokenPending' });
    const c = await connectSocket(base, 'live', { token: bearer(done), tenantCodename: store.codename });
    open.push(c);
    expect((await subscribed(c, ['userCreated'])).topics).toEqual(['userCreated']);

    // a key made by the completed login works while a new login of the same user is pending
    const key = (await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', bearer(done)).send({ name: 'listener' }).expect(201)).body.apiKey;
    const pending = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect((await refusedSocket(base, 'live', { token: bearer(pending.accessToken), tenantCodename: store.codename })).data).toMatchObject({ errCode: 'EmailTwoFactorNeeded' });
    const k = await connectSocket(base, 'live', { token: bearer(key.key) });
    open.push(k);
    expect((await subscribed(k, ['userCreated'])).topics).toEqual(['userCreated']);
    const s = await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(key.key) });
    open.push(s);
    expect((await s.next('subscribed')).topics).toEqual(['userCreated']);
  });

  it('the mobile factor pending, once the email one is done: MobileTwoFactorNeeded', async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, mobile: `+1415555${randomInt(1000, 10000)}`, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
    const l = await login(t.http, email, PASSWORD, store.codename);
    expect(l.body).toMatchObject({ sessionNeedsEmail2FA: true, sessionNeedsMobile2FA: true });
    const afterEmail = await secondFactor(store.codename, 'email', l.accessToken);
    const refused = await refusedSocket(base, 'live', { token: bearer(afterEmail), tenantCodename: store.codename });
    expect(refused.message).toBe('errMsg_getEventsByNameRequiresMobile2FA');
    expect(refused.data).toEqual({ errCode: 'MobileTwoFactorNeeded', detail: 'complete the mobile second factor first' });
    const sse = await refusedSse(afterEmail, store.codename);
    expectError({ status: sse.status, body: JSON.parse(sse.body) }, 403, 'MobileTwoFactorNeeded');
    const done = await secondFactor(store.codename, 'mobile', afterEmail);
    const c = await connectSocket(base, 'live', { token: bearer(done), tenantCodename: store.codename });
    open.push(c);
    expect((await subscribed(c, ['userCreated'])).topics).toEqual(['userCreated']);
  });
});
