import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectSocket, listen, openSse, refusedSocket } from './event-clients.js';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type TestApp } from './helpers.js';

// The event channel speaks the language of the HTTP error bodies: every refusal or end it sends
// carries `message` = the message code, `errCode`, and the sentence in `detail`, on both
// transports (the shipped subscriptions `live`, Socket.IO, and `live-sse`).

const HEADER = 'svc-store-codename';
const bearer = (token: string) => `Bearer ${token}`;

describe('event channel errors', () => {
  let t: TestApp;
  let base: string;
  const open: { close(): void }[] = [];
  const track = <T extends { close(): void }>(c: T): T => (open.push(c), c);

  beforeAll(async () => {
    t = await startApp();
    base = await listen(t);
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.close();
  });

  it('a bad token: connect_error with the message code, and { errCode, detail } as its data; the SSE refusal says the same', async () => {
    const refused = await refusedSocket(base, 'live', { token: 'Bearer not-a-token' });
    expect({ message: refused.message, data: refused.data }).toEqual({ message: 'errMsg_Unauthorized', data: { errCode: 'Unauthorized', detail: 'invalid or expired token' } });

    const sse = await openSse(base, '/events/live-sse/stream?topics=storeCreated', { Authorization: 'Bearer not-a-token' });
    await waitFor('the body', () => (sse.ended ? true : undefined));
    expect({ status: sse.status, body: JSON.parse(sse.body) }).toMatchObject({ status: 401, body: { message: refused.message, errCode: refused.data.errCode, detail: refused.data.detail } });
  });

  it('an unknown topic is rejected with a reason code, not an error; a malformed subscribe is an `error` with the code', async () => {
    const c = track(await connectSocket(base, 'live'));
    c.socket.emit('subscribe', { topics: ['storeCreated', 'noSuchTopic'] });
    expect(await c.next('subscribed')).toEqual({ topics: ['storeCreated'], rejected: [{ topic: 'noSuchTopic', reason: 'UnknownTopic' }] });
    c.socket.emit('subscribe', { topics: 'noSuchTopic' });
    expect(await c.next('error')).toEqual({ message: 'errMsg_ValidationFailed', errCode: 'ValidationFailed', detail: 'topics must be an array of topic names' });
    expect(c.socket.connected).toBe(true);

    const sse = track(await openSse(base, '/events/live-sse/stream?topics=storeCreated,noSuchTopic'));
    expect(await sse.next('subscribed')).toEqual({ topics: ['storeCreated'], rejected: [{ topic: 'noSuchTopic', reason: 'UnknownTopic' }] });
  });

  it('a session ended mid-stream: the socket and the SSE stream get the same `error` shape, then end', async () => {
    const store = await registerStore(t.http);
    const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const c = track(await connectSocket(base, 'live', { token: bearer(l.accessToken), tenantCodename: store.codename }));
    c.socket.emit('subscribe', { topics: ['userCreated'] });
    await c.next('subscribed');
    const s = track(await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(l.accessToken), [HEADER]: store.codename }));
    await s.next('subscribed');

    await t.http.post('/auth-api/logout').set(HEADER, store.codename).set('Authorization', bearer(l.accessToken)).expect(200);
    const ended = { message: 'errMsg_Unauthorized', errCode: 'Unauthorized', detail: 'your session has ended' };
    expect(await c.next('error', 1000)).toEqual(ended);
    expect(await c.next('disconnect', 1000)).toBe('io server disconnect');
    await waitFor('the stream to end', () => (s.ended ? true : undefined), 1000);
    expect(s.received.at(-1)).toEqual({ event: 'error', data: ended });
  });

  it('a change of the login\'s role mid-stream: `error` errMsg_SessionChanged', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const email = uniqueEmail();
    const created = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Store User' }).expect(201);
    const user = await login(t.http, email, PASSWORD, store.codename);
    const c = track(await connectSocket(base, 'live', { token: bearer(user.accessToken), tenantCodename: store.codename }));
    c.socket.emit('subscribe', { topics: ['userCreated'] });
    await c.next('subscribed');

    await t.http.patch(`/auth-api/v1/users/${created.body.user.id}`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).send({ roleId: 'tenantAdmin' }).expect(200);
    expect(await c.next('error', 1000)).toEqual({ message: 'errMsg_SessionChanged', errCode: 'SessionChanged', detail: 'your session changed: connect again' });
  });
});

describe('event channel errors at shutdown', () => {
  it('a shutting-down service ends every socket and SSE stream with `error` errMsg_ServiceUnavailable', async () => {
    const t = await startApp();
    const base = await listen(t);
    const c = await connectSocket(base, 'live');
    const s = await openSse(base, '/events/live-sse/stream?topics=storeCreated');
    try {
      c.socket.emit('subscribe', { topics: ['storeCreated'] });
      await c.next('subscribed');
      await s.next('subscribed');
      // The open stream does not hold the close back.
      await t.close();
      const shutdown = { message: 'errMsg_ServiceUnavailable', errCode: 'ServiceUnavailable', detail: 'the service is shutting down' };
      expect(await c.next('error', 2000)).toEqual(shutdown);
      await waitFor('the stream to end', () => (s.ended ? true : undefined), 2000);
      expect(s.received.at(-1)).toEqual({ event: 'error', data: shutdown });
    } finally {
      c.close();
      s.close();
    }
  });
});
