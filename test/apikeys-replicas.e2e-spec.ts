import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { login, PASSWORD, registerStore, startApp, SUPER_ADMIN, type RegisteredStore, type TestApp, describeWithRedis } from './helpers.js';

// API keys on two instances of the service sharing one database and one Redis: a key's session
// cached by one instance ends there as soon as the other deletes the key or deactivates its owner.

const KEYS = '/auth-api/v1/apikeys';
const USERS = '/auth-api/v1/users';
const HEADER = 'svc-store-codename';

// Without Redis each instance caches API-key sessions in its own memory for up to a day (by
// design), so a deletion on one cannot reach the other.

describeWithRedis('API keys on two replicas', 'the key-session cache is per instance without it', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await Promise.all([startApp(), startApp()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  async function keyOfNewStore(): Promise<{ store: RegisteredStore; token: string; key: string; id: string }> {
    const store = await registerStore(a.http);
    const { accessToken } = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    const res = await a.http.post(KEYS).set(HEADER, store.codename).set('Authorization', `Bearer ${accessToken}`).send({ name: 'replicated' }).expect(201);
    return { store, token: accessToken, key: res.body.apiKey.key, id: res.body.apiKey.id };
  }

  const useKey = (app: TestApp, key: string) => app.http.get(USERS).set('Authorization', `Bearer ${key}`);

  function expectRefused(res: { status: number; body: Record<string, unknown> }): void {
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 401, body: { result: 'ERR', status: 401, errCode: 'Unauthorized' } });
  }

  it('a key used on A (its session cached in Redis) and deleted on B is refused on A at once', async () => {
    const { store, token, key, id } = await keyOfNewStore();
    const used = await useKey(a, key).expect(200);
    expect(used.body).toMatchObject({ userId: store.ownerId, sessionId: id });
    await useKey(b, key).expect(200);

    await b.http.delete(`${KEYS}/${id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).expect(200);
    expectRefused(await useKey(a, key));
    expectRefused(await useKey(b, key));
  });

  it('a key used on A whose owner is deactivated on B is refused on A at once', async () => {
    const { store, key } = await keyOfNewStore();
    await useKey(a, key).expect(200);
    const admin = await login(b.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    await b.http.patch(`${USERS}/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${admin.accessToken}`).send({ isActive: false }).expect(200);
    expectRefused(await useKey(a, key));
  });
});
