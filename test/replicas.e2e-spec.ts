import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, type RegisteredStore, type TestApp, describeWithRedis } from './helpers.js';

// Two instances of the service on one database and one Redis, as replicas behind a load
// balancer: what one does is seen by the other at once.

const LOGIN = '/auth-api/login';
const CURRENT = '/auth-api/currentuser';
const HEADER = 'svc-store-codename';
const NO_LOGIN = { status: 'ERR', message: 'No login found' };

// Without Redis each instance keeps its own session cache and limit counters (by design), so
// nothing here can hold.

describeWithRedis('two replicas', 'in-process caches and limits are per instance by design', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const settings = {
      rateLimits: {
        registration: { points: 1_000_000, durationSeconds: 1 },
        loginPerIp: { points: 1_000_000, durationSeconds: 1 },
        loginPerUsername: { points: 3, durationSeconds: 60 },
      },
    };
    [a, b] = await Promise.all([startApp({ settings }), startApp({ settings })]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const me = (app: TestApp, store: RegisteredStore, token: string) =>
    app.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);

  it('accepts on B a token issued by A', async () => {
    const store = await registerStore(a.http);
    const l = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    const res = await me(b, store, l.accessToken).expect(200);
    expect(res.body).toMatchObject({ sessionId: l.sessionId, userId: store.ownerId, tenantId: store.storeId });
  });

  it('ends the session on A at once after a logout on B', async () => {
    const store = await registerStore(a.http);
    const l = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    await me(a, store, l.accessToken).expect(200); // A has seen (and cached) the session
    await b.http.post('/auth-api/logout').set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
    expect((await me(a, store, l.accessToken).expect(401)).body).toEqual(NO_LOGIN);
  });

  it('ends a session on B at once when A deletes it', async () => {
    const store = await registerStore(a.http);
    const doomed = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    const keeper = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    await me(b, store, doomed.accessToken).expect(200);
    await a.http.delete(`/auth-api/sessions/${doomed.sessionId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${keeper.accessToken}`).expect(200);
    expect((await me(b, store, doomed.accessToken).expect(401)).body).toEqual(NO_LOGIN);
    await me(b, store, keeper.accessToken).expect(200);
  });

  it('counts failed logins per username across both: 2 on A and 1 on B, then 429 on either', async () => {
    const store = await registerStore(a.http);
    const attempt = (app: TestApp, password: string) => app.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password });
    await attempt(a, 'not the password').expect(401);
    await attempt(a, 'not the password').expect(401);
    await attempt(b, 'not the password').expect(401);
    for (const app of [a, b]) {
      const res = await attempt(app, PASSWORD).expect(429);
      expect(res.body).toMatchObject({ result: 'ERR', status: 429, errCode: 'TooManyRequests' });
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
    }
    // another user of the store is not affected on either
    const other = uniqueEmail();
    await b.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email: other, password: PASSWORD, fullname: 'Other' }).expect(201);
    await a.http.post(LOGIN).set(HEADER, store.codename).send({ username: other, password: PASSWORD }).expect(200);
  });

  it('agrees on one current signing key, and each verifies what the other signed', async () => {
    const [ka, kb] = await Promise.all([a.http.get('/auth-api/publickey').expect(200), b.http.get('/auth-api/publickey').expect(200)]);
    expect(ka.body.keyId).toBe(kb.body.keyId);
    expect(ka.body.keyData).toBe(kb.body.keyData);
    const store = await registerStore(b.http);
    const l = await login(b.http, store.ownerEmail, PASSWORD, store.codename);
    const header = JSON.parse(Buffer.from(l.accessToken.split('.')[0], 'base64url').toString('utf8'));
    expect(header.kid).toBe(ka.body.keyId);
    await me(a, store, l.accessToken).expect(200);
  });
});
