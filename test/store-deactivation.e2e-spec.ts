import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { expectError, login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, waitFor, type RegisteredStore, type TestApp, describeWithRedis } from './helpers.js';

// A store whose `isActive` is false: its logins (JWTs) and API keys stop on every instance as soon
// as the database announces the change (each instance's store cache listens for it: a few
// milliseconds, so a request sent the same instant may still pass); set back to true, they work
// again. A deactivated user's sessions and keys end as well.

const HEADER = 'svc-store-codename';
const USERS = '/auth-api/v1/users';
const KEYS = '/auth-api/v1/apikeys';
const CURRENT = '/auth-api/currentuser';

interface Credentials {
  store: RegisteredStore;
  token: string;
  memberToken: string;
  memberId: string;
  key: string;
}

// A store with its owner and a member logged in on `app`, and an API key of the owner.
async function storeWithCredentials(app: TestApp): Promise<Credentials> {
  const store = await registerStore(app.http);
  const token = (await login(app.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  const email = uniqueEmail();
  const member = await app.http.post('/auth-api/users').set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ email, password: PASSWORD, fullname: 'Member' }).expect(201);
  const memberToken = (await login(app.http, email, PASSWORD, store.codename)).accessToken;
  const key = (await app.http.post(KEYS).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ name: 'k' }).expect(201)).body.apiKey.key;
  return { store, token, memberToken, memberId: member.body.user.id, key };
}

const setStoreActive = (db: DataSource, storeId: string, active: boolean) => db.query('UPDATE stores SET "isActive" = $2 WHERE id = $1', [storeId, active]);

// Until the change's announcement has reached `app` (within a second; the answers that follow
// are then checked one by one).
const reached = (app: TestApp, c: Credentials, status: number) =>
  waitFor(`the store change on the instance (${status})`, async () => ((await withToken(app, c, USERS)).status === status ? true : undefined), 1_000);

const withToken = (app: TestApp, c: Credentials, path: string, token = c.token) => app.http.get(path).set(HEADER, c.store.codename).set('Authorization', `Bearer ${token}`);
const withKey = (app: TestApp, c: Credentials) => app.http.get(USERS).set('Authorization', `Bearer ${c.key}`);

async function expectAllWork(app: TestApp, c: Credentials): Promise<void> {
  await withToken(app, c, USERS).expect(200);
  await withToken(app, c, CURRENT, c.memberToken).expect(200);
  await withKey(app, c).expect(200);
}

async function expectAllStopped(app: TestApp, c: Credentials): Promise<void> {
  expectError(await withToken(app, c, USERS), 403, 'StoreInactive');
  expectError(await withToken(app, c, `${USERS}/${c.memberId}`, c.memberToken), 403, 'StoreInactive');
  const current = await withToken(app, c, CURRENT, c.memberToken);
  expect({ status: current.status, body: current.body }).toEqual({ status: 401, body: { status: 'ERR', message: 'No login found' } });
  expectError(await withKey(app, c), 403, 'StoreInactive');
  expectError(await app.http.post('/auth-api/login').set(HEADER, c.store.codename).send({ username: c.store.ownerEmail, password: PASSWORD }), 403, 'StoreInactive');
}

describe('store deactivation (one instance)', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startApp();
    db = t.app.get(DataSource);
  });
  afterAll(() => t?.close());

  it('a deactivated store: its JWTs and API keys stop within a second (sessions cached before); reactivated, they work again', async () => {
    const c = await storeWithCredentials(t);
    await expectAllWork(t, c); // every session and the key's session are cached now
    await setStoreActive(db, c.store.storeId, false);
    await reached(t, c, 403);
    await expectAllStopped(t, c);
    await setStoreActive(db, c.store.storeId, true);
    await reached(t, c, 200);
    await expectAllWork(t, c);
  });

  it('another store and the super administrator are not affected; the super administrator still reaches the store', async () => {
    const [c, other] = [await storeWithCredentials(t), await storeWithCredentials(t)];
    const admin = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
    await setStoreActive(db, c.store.storeId, false);
    await reached(t, c, 403);
    await expectAllWork(t, other);
    await withToken(t, c, USERS, admin).expect(200);
  });

  it('a deactivated user (the user case): its session and its API key stop at once', async () => {
    const c = await storeWithCredentials(t);
    const email = uniqueEmail();
    const res = await t.http.post('/auth-api/users').set(HEADER, c.store.codename).set('Authorization', `Bearer ${c.token}`).send({ email, password: PASSWORD, fullname: 'Admin', roleId: 'tenantAdmin' }).expect(201);
    const adminToken = (await login(t.http, email, PASSWORD, c.store.codename)).accessToken;
    const adminKey = (await t.http.post(KEYS).set(HEADER, c.store.codename).set('Authorization', `Bearer ${adminToken}`).send({ name: 'a' }).expect(201)).body.apiKey.key;
    await withToken(t, c, USERS, adminToken).expect(200);
    await t.http.get(USERS).set('Authorization', `Bearer ${adminKey}`).expect(200);

    await t.http.patch(`${USERS}/${res.body.user.id}`).set(HEADER, c.store.codename).set('Authorization', `Bearer ${c.token}`).send({ isActive: false }).expect(200);
    expectError(await withToken(t, c, USERS, adminToken), 401, 'Unauthorized');
    expectError(await t.http.get(USERS).set('Authorization', `Bearer ${adminKey}`), 401, 'Unauthorized');
  });
});

// Without Redis each instance keeps its own session and key caches; each store cache learns of a
// change from the database in both modes, but two instances need a shared Redis to be the
// production picture this test describes.

describeWithRedis('store deactivation on two replicas', 'instances share caches only through Redis', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await Promise.all([startApp(), startApp()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('logins and keys issued on A, used on both, stop on both within a second when the store is deactivated', async () => {
    const c = await storeWithCredentials(a);
    await expectAllWork(a, c);
    await expectAllWork(b, c);
    await setStoreActive(b.app.get(DataSource), c.store.storeId, false);
    await Promise.all([reached(a, c, 403), reached(b, c, 403)]);
    await expectAllStopped(a, c);
    await expectAllStopped(b, c);
    await setStoreActive(a.app.get(DataSource), c.store.storeId, true);
    await reached(b, c, 200);
    await expectAllWork(b, c);
  });
});
