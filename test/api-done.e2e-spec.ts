import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectSocket, listen, openSse } from './event-clients.js';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type RegisteredStore, type TestApp } from './helpers.js';

// `<apiName>:done`: each successful POST / PUT / PATCH / DELETE publishes its API's completion
// event, which subscriptions can name; an alias naming no such API stops the boot.

const HEADER = 'svc-store-codename';

const doneTopics = [
  { name: 'registered', dataObjectName: 'user', topic: 'postRegisterstoreuser:done', description: '' },
  { name: 'userPatched', dataObjectName: 'user', topic: 'patchUsersById:done', description: '' },
];
const settings = {
  eventSubscriptions: [
    { name: 'done-sse', description: '', transport: 'sse', topics: doneTopics, auth: { absoluteRoles: [] } },
    { name: 'done-ws', description: '', transport: 'websocket', topics: doneTopics, auth: { absoluteRoles: [] } },
  ],
} as never;

describe('API completion events (<apiName>:done)', () => {
  let t: TestApp;
  let base: string;
  let store: RegisteredStore;
  let owner: string;
  const open: { close(): void }[] = [];
  beforeAll(async () => {
    t = await startApp({ settings });
    base = await listen(t);
    store = await registerStore(t.http);
    owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.close();
  });

  const register = (body: object) => t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send(body);

  it('a registration publishes postRegisterstoreuser:done to SSE and Socket.IO subscribers: who, where, which route, never the body; a refused one publishes nothing', async () => {
    const sse = await openSse(base, '/events/done-sse/stream?topics=registered', { Authorization: `Bearer ${owner}`, [HEADER]: store.codename });
    const ws = await connectSocket(base, 'done-ws', { token: `Bearer ${owner}`, tenantCodename: store.codename });
    open.push(sse, ws);
    expect((await sse.next('subscribed')).topics).toEqual(['registered']);
    ws.socket.emit('subscribe', { topics: ['registered'] });
    expect((await ws.next('subscribed')).topics).toEqual(['registered']);

    await register({ email: uniqueEmail(), fullname: 'No Password' }).expect(400);
    const email = uniqueEmail();
    await register({ email, password: PASSWORD, fullname: 'Done User' }).expect(201);
    for (const client of [sse, ws]) {
      const e = await waitFor('the completion event', () => client.events()[0]);
      expect(e).toEqual({
        topic: 'registered',
        name: 'registered',
        data: { storeId: store.storeId, method: 'POST', path: '/auth-api/v1/registerstoreuser', statusCode: 201 },
      });
      expect(JSON.stringify(e)).not.toContain(email);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect([sse.events().length, ws.events().length]).toEqual([1, 1]);
  });

  it('an authenticated change carries the caller as _owner', async () => {
    const sse = await openSse(base, '/events/done-sse/stream?topics=userPatched', { Authorization: `Bearer ${owner}`, [HEADER]: store.codename });
    open.push(sse);
    await sse.next('subscribed');
    await t.http.patch(`/auth-api/v1/users/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${owner}`).send({ fullname: 'Renamed Owner' }).expect(200);
    const e = await waitFor('the completion event', () => sse.events()[0]);
    expect(e.data).toEqual({ storeId: store.storeId, _owner: store.ownerId, method: 'PATCH', path: '/auth-api/v1/users/:id', statusCode: 200 });
  });

  it('another store does not see them (tenant filter of a protected object)', async () => {
    const other = await registerStore(t.http);
    const token = (await login(t.http, other.ownerEmail, PASSWORD, other.codename)).accessToken;
    const sse = await openSse(base, '/events/done-sse/stream?topics=registered', { Authorization: `Bearer ${token}`, [HEADER]: other.codename });
    open.push(sse);
    await sse.next('subscribed');
    await register({ email: uniqueEmail(), password: PASSWORD, fullname: 'Elsewhere' }).expect(201);
    await new Promise((r) => setTimeout(r, 500));
    expect(sse.events()).toEqual([]);
  });
});

describe('an <apiName>:done alias naming no API', () => {
  it('stops the boot naming the subscription, the topic and the alias', async () => {
    const bad = {
      eventSubscriptions: [{ name: 'typo', description: '', transport: 'sse', topics: [{ name: 'joined', dataObjectName: 'user', topic: 'postRegisterStoreUsr:done', description: '' }], auth: { absoluteRoles: [] } }],
    } as never;
    await expect(startApp({ settings: bad })).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringMatching(/settings\.eventSubscriptions "typo" topic "joined": alias "postRegisterStoreUsr:done" names no route that changes something .*postRegisterstoreuser/),
    });
  });

  it('a GET route is no API completion either; an alias in another case than the route name is fine', async () => {
    const settingsFor = (topic: string) =>
      ({ eventSubscriptions: [{ name: 'x', description: '', transport: 'sse', topics: [{ name: 'y', dataObjectName: 'user', topic, description: '' }], auth: { absoluteRoles: [] } }] }) as never;
    await expect(startApp({ settings: settingsFor('getUsers:done') })).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(/alias "getUsers:done" names no route/) });
    const ok = await startApp({ settings: settingsFor('postRegisterStoreUser:done') });
    await ok.close();
  });
});
