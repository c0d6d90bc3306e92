import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectSocket, listen, openSse } from './event-clients.js';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type TestApp, describeWithRedis } from './helpers.js';

// Two replicas on one database and one Redis: every replica reads the Redis streams its own
// clients need, so an event caused on one reaches clients of the other, and a logout on one
// ends streams held by the other.
const HEADER = 'svc-store-codename';

describeWithRedis('event channel on two replicas', 'the in-memory broker is one process by design', () => {
  let one: TestApp;
  let two: TestApp;
  let baseTwo: string;
  const open: { close(): void }[] = [];
  beforeAll(async () => {
    [one, two] = await Promise.all([startApp(), startApp()]);
    baseTwo = await listen(two);
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await Promise.all([one?.close(), two?.close()]);
  });

  it('an event published through replica 1 reaches an SSE client and a Socket.IO client on replica 2', async () => {
    const store = await registerStore(one.http);
    const owner = await login(one.http, store.ownerEmail, PASSWORD, store.codename);
    const socket = await connectSocket(baseTwo, 'live', { token: `Bearer ${owner.accessToken}`, tenantCodename: store.codename });
    const sse = await openSse(baseTwo, '/events/live-sse/stream?topics=userCreated', { Authorization: `Bearer ${owner.accessToken}`, [HEADER]: store.codename });
    open.push(socket, sse);
    socket.socket.emit('subscribe', { topics: ['userCreated'] });
    expect((await socket.next('subscribed')).topics).toEqual(['userCreated']);
    expect((await sse.next('subscribed')).topics).toEqual(['userCreated']);

    const res = await one.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Far User' }).expect(201);
    for (const c of [socket, sse]) {
      const e = await waitFor('the user from replica 1', () => c.events().find((x) => x.data.id === res.body.user.id));
      expect(e).toMatchObject({ topic: 'userCreated', name: 'userCreated', data: { storeId: store.storeId } });
    }
  });

  it('a logout on replica 1 ends streams on replica 2 within a second', async () => {
    const store = await registerStore(one.http);
    const l = await login(one.http, store.ownerEmail, PASSWORD, store.codename);
    const socket = await connectSocket(baseTwo, 'live', { token: `Bearer ${l.accessToken}`, tenantCodename: store.codename });
    const sse = await openSse(baseTwo, '/events/live-sse/stream?topics=userCreated', { Authorization: `Bearer ${l.accessToken}`, [HEADER]: store.codename });
    open.push(socket, sse);
    socket.socket.emit('subscribe', { topics: ['userCreated'] });
    await socket.next('subscribed');
    await sse.next('subscribed');
    await one.http.post('/auth-api/logout').set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
    expect(await socket.next('error', 1000)).toEqual({ message: 'errMsg_Unauthorized', errCode: 'Unauthorized', detail: 'your session has ended' });
    await waitFor('the SSE stream to end', () => (sse.ended ? true : undefined), 1000);
  });
});
