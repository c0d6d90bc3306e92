import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type TestAgent from 'supertest/lib/agent.js';
import { DataSource } from 'typeorm';
import { DAY_MS, ManualClock } from '../src/platform/clock/clock.js';
import type { ApiKeyLocation } from '../src/identity/apikey/api-key.settings.js';
import type { FakeApi } from './fake-api.js';
import { APP, fakePusherApi, type PusherRequest } from './fake-pusher.js';
import { login, PASSWORD, registerStore, startApp, SUPER_ADMIN, unique, uniqueEmail, type RegisteredStore, type TestApp, expectError } from './helpers.js';

// API keys seen from a client of the real app: created with a login, shown once, used in place
// of a login on the routes that accept them, scoped to their store and to their creator's rights,
// and gone at once when deleted or when their owner is deactivated.

const KEYS = '/auth-api/v1/apikeys';
const USERS = '/auth-api/v1/users';
const CREATE_USER = '/auth-api/users';
const STORE = '/auth-api/v1/store';
const HEADER = 'svc-store-codename';
const KEY = /^sk_svc_[0-9a-f]{48}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HOUR_MS = 3_600_000;
const RECORD_KEYS = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'permissions', 'prefix', 'roles', 'storeId', 'userId'];

type Res = { status: number; body: Record<string, unknown>; headers: Record<string, unknown> };

// A key is the credential by itself: nothing that would log the caller in is handed back.
function expectNoLoginIssued(res: Res): void {
  expect(res.headers['set-cookie']).toBeUndefined();
  expect(Object.keys(res.headers).filter((h) => h.includes('access-token'))).toEqual([]);
}

interface Owner {
  store: RegisteredStore;
  token: string;
}

async function ownerOfNewStore(t: TestApp): Promise<Owner> {
  const store = await registerStore(t.http);
  const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  return { store, token: accessToken };
}

// A tenantUser of the store, logged in.
async function userOf(t: TestApp, store: RegisteredStore): Promise<{ id: string; token: string; sessionId: string }> {
  const email = uniqueEmail();
  const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Store User' }).expect(201);
  const { accessToken, sessionId } = await login(t.http, email, PASSWORD, store.codename);
  return { id: res.body.user.id, token: accessToken, sessionId };
}

function createKey(t: TestApp, store: RegisteredStore, token: string, body: Record<string, unknown> = { name: 'reporting job' }) {
  return t.http.post(KEYS).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send(body);
}

async function newKey(t: TestApp, store: RegisteredStore, token: string, body?: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const res = await createKey(t, store, token, body);
  expect(res.status).toBe(201);
  return { key: res.body.apiKey.key, id: res.body.apiKey.id };
}

function listKeys(t: TestApp, store: RegisteredStore, token: string) {
  return t.http.get(KEYS).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);
}

// GET /v1/users with the key as a bearer value and no store named.
function usersWithKey(http: TestAgent, key: string) {
  return http.get(USERS).set('Authorization', `Bearer ${key}`);
}

describe('API keys (bearer location, the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t?.close());

  it('create: the plaintext once, the record with its prefix and the owner\'s roles; only the SHA-256 is stored', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const res = await createKey(t, store, token, { name: 'reporting job' }).expect(201);
    expect(res.body).toMatchObject({ status: 'OK', statusCode: '201', dataName: 'apiKey', action: 'create', method: 'POST', userId: store.ownerId, rowCount: 1 });
    const created = res.body.apiKey;
    expect(created.key).toMatch(KEY);
    expect(Object.keys(created).sort()).toEqual([...RECORD_KEYS, 'key'].sort());
    expect(created).toMatchObject({
      name: 'reporting job',
      prefix: created.key.slice(0, 13),
      userId: store.ownerId,
      storeId: store.storeId,
      roles: ['tenantOwner'],
      permissions: [],
      expiresAt: null,
      lastUsedAt: null,
    });
    expect(created.id).toMatch(UUID);
    expect(JSON.stringify(res.body)).not.toContain('keyHash');

    const rows: Array<Record<string, unknown>> = await t.app.get(DataSource).query('SELECT * FROM api_keys WHERE id = $1', [created.id]);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row.keyHash).toBe(createHash('sha256').update(created.key).digest('hex'));
    // no column holds the key, or any part of it beyond the shown prefix
    const secretPart = created.key.slice(13);
    for (const [column, value] of Object.entries(row)) {
      expect({ column, holdsKey: JSON.stringify(value ?? null).includes(secretPart) }).toEqual({ column, holdsKey: false });
    }
  });

  it('use: lists the key\'s store without naming it; the same with its own codename; another store\'s codename → 403', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const member = await userOf(t, store);
    const other = await registerStore(t.http);
    const { key, id } = await newKey(t, store, token);

    const res = await usersWithKey(t.http, key).expect(200);
    expect(res.body).toMatchObject({ status: 'OK', dataName: 'users', action: 'list', userId: store.ownerId, sessionId: id });
    const users = res.body.users as Array<{ id: string; storeId: string }>;
    expect(users.map((u) => u.id).sort()).toEqual([store.ownerId, member.id].sort());
    expect(users.every((u) => u.storeId === store.storeId)).toBe(true);
    expectNoLoginIssued(res);

    const own = await usersWithKey(t.http, key).set(HEADER, store.codename).expect(200);
    expect(own.body.users.map((u: { id: string }) => u.id).sort()).toEqual([store.ownerId, member.id].sort());
    expectNoLoginIssued(own);

    expectError(await usersWithKey(t.http, key).set(HEADER, other.codename), 403, 'TenantMismatch');
    expectError(await usersWithKey(t.http, key).query({ _store: other.codename }), 403, 'TenantMismatch');
    // root, named, is another store too
    expectError(await usersWithKey(t.http, key).set(HEADER, 'root'), 403, 'TenantMismatch');

    // the other routes that accept keys
    const one = await t.http.get(`${USERS}/${member.id}`).set('Authorization', `Bearer ${key}`).expect(200);
    expect(one.body).toMatchObject({ dataName: 'user', user: { id: member.id, storeId: store.storeId } });
    const email = uniqueEmail();
    const made = await t.http.post(CREATE_USER).set('Authorization', `Bearer ${key}`).send({ email, password: PASSWORD, fullname: 'Made By Key' }).expect(201);
    expect(made.body).toMatchObject({ dataName: 'user', userId: store.ownerId, user: { email, storeId: store.storeId, roleId: 'tenantUser' } });
    expectNoLoginIssued(made);
  });

  it('routes that create or delete keys, change passwords or list sessions answer 401 PrincipalNotAccepted, with or without the store named', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const { key, id } = await newKey(t, store, token);
    const bearer = `Bearer ${key}`;
    for (const named of [false, true]) {
      const withStore = <T extends { set(name: string, value: string): T }>(req: T) => (named ? req.set(HEADER, store.codename) : req);
      expectError(await withStore(t.http.post(KEYS).set('Authorization', bearer)).send({ name: 'key from a key' }), 401, 'PrincipalNotAccepted');
      expectError(await withStore(t.http.delete(`${KEYS}/${id}`).set('Authorization', bearer)), 401, 'PrincipalNotAccepted');
      expectError(await withStore(t.http.patch(`${USERS}/${store.ownerId}`).set('Authorization', bearer)).send({ password: 'taken over by a key', currentPassword: PASSWORD }), 401, 'PrincipalNotAccepted');
      expectError(await withStore(t.http.get('/auth-api/sessions').set('Authorization', bearer)), 401, 'PrincipalNotAccepted');
    }
    // nothing was created, deleted or changed by those calls
    const keys = await listKeys(t, store, token).expect(200);
    expect(keys.body.apiKeys).toHaveLength(1);
    await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  });

  it('a key goes where a login of its roles goes: current user, users, notifications, avatar upload, key listing', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const member = await userOf(t, store);
    const { key, id } = await newKey(t, store, token);
    const bearer = `Bearer ${key}`;

    // the key's session; no access token is handed out
    const me = await t.http.get('/auth-api/currentuser').set('Authorization', bearer).expect(200);
    expect(me.body).toEqual({ sessionId: id, userId: store.ownerId, email: store.ownerEmail, fullname: 'Store Owner', roleId: 'tenantOwner', tenantId: store.storeId });
    expectNoLoginIssued(me);

    const inbox = await t.http.get('/notifications').set('Authorization', bearer).expect(200);
    expect(inbox.body).toMatchObject({ status: 'OK' });
    await t.http.get('/notifications/unread').set('Authorization', bearer).expect(200);

    const keys = await t.http.get(KEYS).set('Authorization', bearer).expect(200);
    expect(keys.body.apiKeys.map((k: { id: string }) => k.id)).toEqual([id]);

    const renamed = await t.http.patch(`${USERS}/${member.id}`).set('Authorization', bearer).send({ fullname: 'Renamed By Key' }).expect(200);
    expect(renamed.body.user.fullname).toBe('Renamed By Key');

    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
    const uploaded = await t.http.post('/auth-api/bucket/userAvatars/upload').set('Authorization', bearer).attach('file', png, { filename: 'a.png', contentType: 'image/png' });
    expect(uploaded.status).toBeLessThan(300);

    await t.http.delete(`${USERS}/${member.id}`).set('Authorization', bearer).expect(200);
    expectError(await t.http.get(`${USERS}/${member.id}`).set('Authorization', bearer), 404, 'UserNotFound');
  });

  it('a key of a user without an admin role keeps to that user', async () => {
    const { store } = await ownerOfNewStore(t);
    const member = await userOf(t, store);
    const { key } = await newKey(t, store, member.token);
    const bearer = `Bearer ${key}`;
    const me = await t.http.get('/auth-api/currentuser').set('Authorization', bearer).expect(200);
    expect(me.body).toMatchObject({ userId: member.id, roleId: 'tenantUser' });
    expectError(await t.http.get(USERS).set('Authorization', bearer), 403, 'Forbidden');
    expectError(await t.http.delete(`${USERS}/${store.ownerId}`).set('Authorization', bearer), 403, 'Forbidden');
    expectError(await t.http.patch(`${USERS}/${store.ownerId}`).set('Authorization', bearer).send({ fullname: 'Nope' }), 403, 'Forbidden');
  });

  it('a store admin\'s key changes the store (PATCH /v1/store), as the admin\'s login does', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const adminEmail = uniqueEmail();
    await t.http.post(CREATE_USER).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ email: adminEmail, password: PASSWORD, fullname: 'Admin', roleId: 'tenantAdmin' }).expect(201);
    const admin = await login(t.http, adminEmail, PASSWORD, store.codename);
    const { key } = await newKey(t, store, admin.accessToken);

    const res = await t.http.patch(STORE).set('Authorization', `Bearer ${key}`).send({ language: 'de' }).expect(200);
    expect(res.body).toMatchObject({ status: 'OK', dataName: 'store', action: 'update', userId: admin.userId, store: { id: store.storeId, codename: store.codename, language: 'de' } });
    expectNoLoginIssued(res);
    // the owner's key, with the store named
    const ownerKey = await newKey(t, store, token);
    const cleared = await t.http.patch(STORE).set(HEADER, store.codename).set('Authorization', `Bearer ${ownerKey.key}`).send({ language: null }).expect(200);
    expect(cleared.body.store).not.toHaveProperty('language');
    // never another store's
    const other = await registerStore(t.http);
    expectError(await t.http.patch(STORE).set(HEADER, other.codename).set('Authorization', `Bearer ${key}`).send({ language: 'fr' }), 403, 'TenantMismatch');
  });

  it('a key cannot exceed its creator\'s role: a plain user\'s key, a narrowed key and a demoted admin\'s key are refused the store', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const member = await userOf(t, store);
    const memberKey = await newKey(t, store, member.token);
    const narrow = await newKey(t, store, token, { name: 'user level', roles: ['tenantUser'] });
    const adminEmail = uniqueEmail();
    const created = await t.http.post(CREATE_USER).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ email: adminEmail, password: PASSWORD, fullname: 'Admin', roleId: 'tenantAdmin' }).expect(201);
    const adminKey = await newKey(t, store, (await login(t.http, adminEmail, PASSWORD, store.codename)).accessToken);
    const patchStore = (key: string, language: string) => t.http.patch(STORE).set('Authorization', `Bearer ${key}`).send({ language });

    // a tenantUser cannot ask for more when creating its key, and its key is held to tenantUser
    expectError(await createKey(t, store, member.token, { name: 'k', roles: ['tenantAdmin'] }), 403, 'RoleNotAssignable');
    expectError(await patchStore(memberKey.key, 'fr'), 403, 'Forbidden');
    expectError(await patchStore(narrow.key, 'fr'), 403, 'Forbidden');
    await patchStore(adminKey.key, 'it').expect(200);

    // the admin demoted: its key has no role its creator still holds
    await t.http.patch(`${USERS}/${created.body.user.id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ roleId: 'tenantUser' }).expect(200);
    expectError(await patchStore(adminKey.key, 'fr'), 401, 'Unauthorized');

    // none of the refused calls changed the store
    expect(await t.app.get(DataSource).query('SELECT language FROM stores WHERE id = $1', [store.storeId])).toEqual([{ language: 'it' }]);
  });

  it('a key ends its creator\'s logins (DELETE /sessions, DELETE /sessions/:id); the key is no session and keeps working', async () => {
    const { store } = await ownerOfNewStore(t);
    const member = await userOf(t, store);
    const logins = [];
    for (let i = 0; i < 3; i++) logins.push(await login(t.http, store.ownerEmail, PASSWORD, store.codename));
    const { key, id } = await newKey(t, store, logins[0].accessToken);
    const bearer = `Bearer ${key}`;
    const asLogin = (l: { accessToken: string }) => t.http.get(`${USERS}/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`);
    const sessionRows = async () => (await t.app.get(DataSource).query('SELECT id FROM sessions WHERE "userId" = $1', [store.ownerId])) as Array<{ id: string }>;
    const before = (await sessionRows()).length; // the logins above and the one of ownerOfNewStore

    // one of them
    const one = await t.http.delete(`/auth-api/sessions/${logins[1].sessionId}`).set('Authorization', bearer).expect(200);
    expect(one.body).toEqual({ status: 'OK', ended: 1 });
    expect((await asLogin(logins[1])).status).toBe(401);
    await asLogin(logins[0]).expect(200);
    // the key's own id is no session of its creator; another user's session is not its creator's
    expectError(await t.http.delete(`/auth-api/sessions/${id}`).set('Authorization', bearer), 404, 'SessionNotFound');
    expectError(await t.http.delete(`/auth-api/sessions/${member.sessionId}`).set('Authorization', bearer), 404, 'SessionNotFound');

    // all of them: no login is "this one" for a key
    const all = await t.http.delete('/auth-api/sessions').set('Authorization', bearer).expect(200);
    expect(all.body).toEqual({ status: 'OK', ended: before - 1 });
    expect(await sessionRows()).toEqual([]);
    for (const l of logins) expect((await asLogin(l)).status).toBe(401);

    // the key itself was not ended; the other user's login was not touched
    await t.http.get('/auth-api/currentuser').set('Authorization', bearer).expect(200);
    const keys = await t.http.get(KEYS).set('Authorization', bearer).expect(200);
    expect(keys.body.apiKeys.map((k: { id: string }) => k.id)).toEqual([id]);
    await t.http.get(`${USERS}/${member.id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${member.token}`).expect(200);
    // nothing left to end
    expect((await t.http.delete('/auth-api/sessions').set('Authorization', bearer).expect(200)).body).toEqual({ status: 'OK', ended: 0 });
  });

  it('/currentuser with an unknown key, or a key of another store, answers 401 No login found', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const other = await registerStore(t.http);
    const { key } = await newKey(t, store, token);
    const unknown = await t.http.get('/auth-api/currentuser').set('Authorization', `Bearer sk_svc_${'0'.repeat(48)}`);
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 401, body: { status: 'ERR', message: 'No login found' } });
    const elsewhere = await t.http.get('/auth-api/currentuser').set(HEADER, other.codename).set('Authorization', `Bearer ${key}`);
    expect({ status: elsewhere.status, body: elsewhere.body }).toEqual({ status: 401, body: { status: 'ERR', message: 'No login found' } });
  });

  it('an unknown key, or a bearer value that is not a key (read as a JWT), → 401', async () => {
    expectError(await usersWithKey(t.http, `sk_svc_${'0'.repeat(48)}`), 401, 'Unauthorized');
    expectError(await t.http.get(USERS).set('Authorization', 'Bearer garbage'), 401, 'Unauthorized');
    expectError(await t.http.get(USERS).set('Authorization', 'Bearer sk_other_0123'), 401, 'Unauthorized');
  });

  it('list: prefix, name, expiry and last use, never the key; a user sees its own keys, the owner the store\'s', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const member = await userOf(t, store);
    const elsewhere = await ownerOfNewStore(t);
    const ownerKey = await newKey(t, store, token, { name: 'owner key' });
    const memberKey = await newKey(t, store, member.token, { name: 'member key' });
    await newKey(t, elsewhere.store, elsewhere.token, { name: 'other store key' });

    const before = await listKeys(t, store, member.token).expect(200);
    expect(before.body).toMatchObject({ dataName: 'apiKeys', action: 'list', rowCount: 1, userId: member.id });
    expect(before.body.apiKeys).toEqual([
      expect.objectContaining({ id: memberKey.id, name: 'member key', prefix: memberKey.key.slice(0, 13), userId: member.id, roles: ['tenantUser'], expiresAt: null, lastUsedAt: null }),
    ]);

    // the member's key reads the member's own profile (not an admin: no list)
    await t.http.get(`${USERS}/${member.id}`).set('Authorization', `Bearer ${memberKey.key}`).expect(200);
    const after = await listKeys(t, store, member.token).expect(200);
    expect(Date.parse(after.body.apiKeys[0].lastUsedAt)).not.toBeNaN();

    const all = await listKeys(t, store, token).expect(200);
    expect(all.body.rowCount).toBe(2);
    expect(all.body.paging).toMatchObject({ totalRowCount: 2 });
    const listed = all.body.apiKeys as Array<Record<string, unknown>>;
    expect(listed.map((k) => k.id).sort()).toEqual([ownerKey.id, memberKey.id].sort());
    for (const k of listed) expect(Object.keys(k).sort()).toEqual(RECORD_KEYS);
    const text = JSON.stringify(all.body) + JSON.stringify(after.body);
    for (const { key } of [ownerKey, memberKey]) expect(text).not.toContain(key.slice(13));
    expect(text).not.toContain('keyHash');
  });

  it('delete: 200, the key is refused at once (its cached session is gone); twice → 404', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const { key, id } = await newKey(t, store, token);
    const keeper = await newKey(t, store, token, { name: 'keeper' });
    await usersWithKey(t.http, key).expect(200); // the key's session is now cached
    await usersWithKey(t.http, keeper.key).expect(200);

    const res = await t.http.delete(`${KEYS}/${id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).expect(200);
    expect(res.body).toMatchObject({ status: 'OK', dataName: 'apiKey', action: 'delete', apiKey: { id } });
    expectError(await usersWithKey(t.http, key), 401, 'Unauthorized');
    await usersWithKey(t.http, keeper.key).expect(200);
    const listed = await listKeys(t, store, token).expect(200);
    expect(listed.body.apiKeys.map((k: { id: string }) => k.id)).toEqual([keeper.id]);

    expectError(await t.http.delete(`${KEYS}/${id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`), 404, 'NotFound');
  });

  it('delete: a user cannot delete another user\'s key (404), nor can another store\'s owner; the store\'s owner can', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const member = await userOf(t, store);
    const stranger = await ownerOfNewStore(t);
    const ownerKey = await newKey(t, store, token);
    const memberKey = await newKey(t, store, member.token);

    const del = (codename: string, bearer: string, id: string) => t.http.delete(`${KEYS}/${id}`).set(HEADER, codename).set('Authorization', `Bearer ${bearer}`);
    expectError(await del(store.codename, member.token, ownerKey.id), 404, 'NotFound');
    expectError(await del(stranger.store.codename, stranger.token, ownerKey.id), 404, 'NotFound');
    expectError(await del(stranger.store.codename, stranger.token, memberKey.id), 404, 'NotFound');
    await usersWithKey(t.http, ownerKey.key).expect(200);

    const own = `${USERS}/${member.id}`;
    await t.http.get(own).set('Authorization', `Bearer ${memberKey.key}`).expect(200);
    await del(store.codename, token, memberKey.id).expect(200);
    expectError(await t.http.get(own).set('Authorization', `Bearer ${memberKey.key}`), 401, 'Unauthorized');
  });

  it('delete: a tenantAdmin cannot delete the tenantOwner\'s key (403), only keys of users it may manage', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const adminEmail = uniqueEmail();
    await t.http.post(CREATE_USER).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ email: adminEmail, password: PASSWORD, fullname: 'Admin', roleId: 'tenantAdmin' }).expect(201);
    const admin = (await login(t.http, adminEmail, PASSWORD, store.codename)).accessToken;
    const member = await userOf(t, store);
    const ownerKey = await newKey(t, store, token);
    const memberKey = await newKey(t, store, member.token);
    const del = (bearer: string, id: string) => t.http.delete(`${KEYS}/${id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${bearer}`);

    expectError(await del(admin, ownerKey.id), 403, 'Forbidden');
    await usersWithKey(t.http, ownerKey.key).expect(200); // still works
    await del(admin, memberKey.id).expect(200); // a tenantUser's key: the admin manages that user
    expectError(await usersWithKey(t.http, memberKey.key), 401, 'Unauthorized');

    // the same rule as for the user: the admin may not change the owner either
    expectError(await t.http.patch(`${USERS}/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${admin}`).send({ fullname: 'Taken over' }), 403, 'Forbidden');
    // the super administrator may
    const superAdmin = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
    await del(superAdmin, ownerKey.id).expect(200);
  });

  it('rights: never more than the creator\'s roles, and no permission it does not know; a narrower key is held to its roles', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const member = await userOf(t, store);

    expectError(await createKey(t, store, member.token, { name: 'k', roles: ['tenantAdmin'] }), 403, 'RoleNotAssignable');
    expectError(await createKey(t, store, member.token, { name: 'k', roles: ['tenantOwner'] }), 403, 'RoleNotAssignable');
    expectError(await createKey(t, store, token, { name: 'k', roles: ['superAdmin'] }), 403, 'RoleNotAssignable');
    expectError(await createKey(t, store, token, { name: 'k', roles: ['tenantOwner', 'superAdmin'] }), 403, 'RoleNotAssignable');
    expectError(await createKey(t, store, token, { name: 'k', roles: [] }), 403, 'RoleNotAssignable');
    expectError(await createKey(t, store, token, { name: 'k', permissions: ['x'] }), 400, 'PermissionUnknown');
    // none of those made a key
    expect((await listKeys(t, store, token).expect(200)).body.apiKeys).toEqual([]);

    const narrow = await createKey(t, store, token, { name: 'read own profile', roles: ['tenantUser'] }).expect(201);
    expect(narrow.body.apiKey).toMatchObject({ roles: ['tenantUser'], userId: store.ownerId });
    const full = await newKey(t, store, token);
    const narrowKey: string = narrow.body.apiKey.key;

    await usersWithKey(t.http, full.key).expect(200);
    expectError(await usersWithKey(t.http, narrowKey), 403, 'Forbidden');
    // a lesser admin role of the owner's level is still an admin
    const admin = await newKey(t, store, token, { name: 'admin', roles: ['tenantAdmin'] });
    await usersWithKey(t.http, admin.key).expect(200);
    expectError(await t.http.post(CREATE_USER).set('Authorization', `Bearer ${narrowKey}`).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'No' }), 403, 'Forbidden');
    // as a tenantUser, it reads its user's own profile only
    await t.http.get(`${USERS}/${store.ownerId}`).set('Authorization', `Bearer ${narrowKey}`).expect(200);
    expectError(await t.http.get(`${USERS}/${member.id}`).set('Authorization', `Bearer ${narrowKey}`), 403, 'Forbidden');
  });

  it('the owner deactivated by the super administrator: the key → 401 at once; reactivated: it works again', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const { key } = await newKey(t, store, token);
    await usersWithKey(t.http, key).expect(200); // cached
    const admin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    const patch = (isActive: boolean) =>
      t.http.patch(`${USERS}/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${admin.accessToken}`).send({ isActive }).expect(200);

    await patch(false);
    expectError(await usersWithKey(t.http, key), 401, 'Unauthorized');
    await patch(true);
    await usersWithKey(t.http, key).expect(200);
  });

  it('a key never has more than its owner has now: demoted, the owner\'s admin key stops at once; deleted, its row goes', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const email = uniqueEmail();
    const created = await t.http
      .post(CREATE_USER)
      .set(HEADER, store.codename)
      .set('Authorization', `Bearer ${token}`)
      .send({ email, password: PASSWORD, fullname: 'Store Admin', roleId: 'tenantAdmin' })
      .expect(201);
    const adminId: string = created.body.user.id;
    const adminLogin = await login(t.http, email, PASSWORD, store.codename);
    const { key, id } = await newKey(t, store, adminLogin.accessToken);
    await usersWithKey(t.http, key).expect(200); // cached with tenantAdmin

    const asOwner = (req: ReturnType<TestAgent['get']>) => req.set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);
    const narrow = await newKey(t, store, adminLogin.accessToken, { name: 'user-level', roles: ['tenantUser'] });
    const ownProfile = (k: string) => t.http.get(`${USERS}/${adminId}`).set('Authorization', `Bearer ${k}`);
    await ownProfile(narrow.key).expect(200);

    // demoted: the tenantAdmin key has no role its owner still holds; the tenantUser key keeps working
    await asOwner(t.http.patch(`${USERS}/${adminId}`)).send({ roleId: 'tenantUser' }).expect(200);
    expectError(await usersWithKey(t.http, key), 401, 'Unauthorized');
    expectError(await ownProfile(key), 401, 'Unauthorized');
    await ownProfile(narrow.key).expect(200);
    // promoted again: the key is the owner's tenantAdmin key again
    await asOwner(t.http.patch(`${USERS}/${adminId}`)).send({ roleId: 'tenantAdmin' }).expect(200);
    await usersWithKey(t.http, key).expect(200);

    await asOwner(t.http.delete(`${USERS}/${adminId}`)).expect(200);
    for (const k of [key, narrow.key]) expectError(await ownProfile(k), 401, 'Unauthorized');
    expect(await t.app.get(DataSource).query('SELECT id FROM api_keys WHERE id = $1', [id])).toEqual([]);
  });

  it("a super administrator targeting a store lists and deletes its keys, but is refused one there (403 ApiKeyOutsideOwnStore): no key is made in either store", async () => {
    const { store, token } = await ownerOfNewStore(t);
    const owners = await newKey(t, store, token, { name: 'owner job' });
    const admin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    const asAdmin = <R extends { set(name: string, value: string): R }>(req: R) => req.set(HEADER, store.codename).set('Authorization', `Bearer ${admin.accessToken}`);
    const name = unique('made from the root ');

    const refused = await asAdmin(t.http.post(KEYS)).send({ name });
    expectError(refused, 403, 'ApiKeyOutsideOwnStore');
    expect(refused.body.detail).toContain(store.codename);
    expect(refused.body.key).toBeUndefined();
    expect(await t.app.get(DataSource).query('SELECT id FROM api_keys WHERE name = $1', [name])).toEqual([]);
    // named roles change nothing: neither a super-admin key nor a tenant one
    for (const roles of [['superAdmin'], ['tenantOwner']]) expectError(await asAdmin(t.http.post(KEYS)).send({ name, roles }), 403, 'ApiKeyOutsideOwnStore');

    // the store's keys are the ones it sees, and it may delete them
    const listed = await asAdmin(t.http.get(KEYS)).expect(200);
    expect(listed.body.apiKeys.map((k: { id: string }) => k.id)).toEqual([owners.id]);
    await asAdmin(t.http.delete(`${KEYS}/${owners.id}`)).expect(200);
    expectError(await usersWithKey(t.http, owners.key), 401, 'Unauthorized');
    expect((await listKeys(t, store, token).expect(200)).body.apiKeys).toEqual([]);

    // at the root, its own store, it makes its own key as before
    const own = await t.http.post(KEYS).set('Authorization', `Bearer ${admin.accessToken}`).send({ name }).expect(201);
    expect(own.body.apiKey).toMatchObject({ userId: admin.userId, roles: ['superAdmin'] });
    await t.http.delete(`${KEYS}/${own.body.apiKey.id}`).set('Authorization', `Bearer ${admin.accessToken}`).expect(200);
  });

  it('create: a body that is not a key request → 400', async () => {
    const { store, token } = await ownerOfNewStore(t);
    expectError(await createKey(t, store, token, {}), 400, 'ValidationFailed');
    expectError(await createKey(t, store, token, { name: 'k', expiresAt: 'tomorrow' }), 400, 'ValidationFailed');
    expectError(await createKey(t, store, token, { name: 'k', keyHash: 'f'.repeat(64) }), 400, 'UnknownField');
    expectError(await t.http.post(KEYS).set(HEADER, store.codename).send({ name: 'k' }), 401, 'Unauthorized');
  });
});

describe('API keys and time (controllable clock)', () => {
  const clock = new ManualClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ clock });
  });
  afterAll(() => t?.close());

  it('a key with an expiry works before it and gets 401 after it; an expiry in the past → 400', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const expiresAt = new Date(clock.now().getTime() + HOUR_MS).toISOString();
    const res = await createKey(t, store, token, { name: 'one hour', expiresAt }).expect(201);
    expect(res.body.apiKey.expiresAt).toBe(expiresAt);
    const key: string = res.body.apiKey.key;
    await usersWithKey(t.http, key).expect(200); // cached until the key's expiry

    clock.advance(2 * HOUR_MS);
    expectError(await usersWithKey(t.http, key), 401, 'Unauthorized');
    // still listed, with its expiry
    const listed = await listKeys(t, store, token).expect(200);
    expect(listed.body.apiKeys).toEqual([expect.objectContaining({ id: res.body.apiKey.id, expiresAt })]);

    const past = new Date(clock.now().getTime() - 60_000).toISOString();
    expectError(await createKey(t, store, token, { name: 'too late', expiresAt: past }), 400, 'ValidationFailed');
    expectError(await createKey(t, store, token, { name: 'now', expiresAt: clock.now().toISOString() }), 400, 'ValidationFailed');
  });

  it('the key\'s session lives a day: within it the key is not validated again, after it it is', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const { key } = await newKey(t, store, token);
    const lastUsed = async () => (await listKeys(t, store, token).expect(200)).body.apiKeys[0].lastUsedAt;

    const first = clock.now().toISOString();
    await usersWithKey(t.http, key).expect(200);
    expect(await lastUsed()).toBe(first);

    clock.advance(HOUR_MS);
    await usersWithKey(t.http, key).expect(200);
    expect(await lastUsed()).toBe(first); // served from the cached session

    clock.advance(DAY_MS);
    const again = clock.now().toISOString();
    await usersWithKey(t.http, key).expect(200);
    expect(await lastUsed()).toBe(again); // validated again
  });
});

// One app per configured location, field name `x-api-key`: the key sent there, optionally with
// a store named in the header.
function callAt(location: ApiKeyLocation, http: TestAgent, key: string, codename?: string): Promise<Res> {
  if (location === 'body') {
    const req = http.post(CREATE_USER).send({ 'x-api-key': key, email: uniqueEmail(), password: PASSWORD, fullname: 'Made By Key' });
    return codename ? req.set(HEADER, codename) : req;
  }
  const req = codename ? http.get(USERS).set(HEADER, codename) : http.get(USERS);
  if (location === 'header') return req.set('x-api-key', key);
  if (location === 'query') return req.query({ 'x-api-key': key, pageRowCount: 5 });
  return req.set('Cookie', `x-api-key=${key}`);
}

describe.each(['header', 'query', 'cookie', 'body'] as ApiKeyLocation[])('API keys in the %s location', (location) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ settings: { apiKeys: { enabled: true, location, fieldName: 'x-api-key' } } });
  });
  afterAll(() => t?.close());

  const ok = location === 'body' ? 201 : 200;

  it('the key there authenticates, in its own store only; the same key as a bearer value does not', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const { key, id } = await newKey(t, store, token);

    const res = await callAt(location, t.http, key);
    expect(res.status).toBe(ok);
    expect(res.body).toMatchObject({ status: 'OK', userId: store.ownerId, sessionId: id });
    if (location === 'body') expect(res.body).toMatchObject({ dataName: 'user', user: { storeId: store.storeId, roleId: 'tenantUser' } });
    else expect((res.body.users as Array<{ id: string }>).map((u) => u.id)).toContain(store.ownerId);
    expect(JSON.stringify(res.body)).not.toContain(key);
    expectNoLoginIssued(res);

    expect((await callAt(location, t.http, key, store.codename)).status).toBe(ok);
    const other = await registerStore(t.http);
    expectError(await callAt(location, t.http, key, other.codename), 403, 'TenantMismatch');

    expectError(await callAt(location, t.http, `sk_svc_${'0'.repeat(48)}`), 401, 'Unauthorized');
    expectError(await usersWithKey(t.http, key), 401, 'Unauthorized');
  });
});

describe('API keys disabled', () => {
  let main: TestApp;
  let off: TestApp;
  beforeAll(async () => {
    [main, off] = await Promise.all([startApp(), startApp({ settings: { apiKeys: { enabled: false, location: 'bearer', fieldName: 'x-api-key' } } })]);
  });
  afterAll(async () => {
    await Promise.all([main?.close(), off?.close()]);
  });

  it('a valid key is ignored (the request is unauthenticated → 401) and no key can be created (403)', async () => {
    const { store, token } = await ownerOfNewStore(main);
    const { key } = await newKey(main, store, token);
    await usersWithKey(main.http, key).expect(200);

    expectError(await usersWithKey(off.http, key), 401, 'Unauthorized');
    expectError(await usersWithKey(off.http, key).set(HEADER, store.codename), 401, 'Unauthorized');
    expectError(await createKey(off, store, token), 403, 'Forbidden');
    // the login itself still works there
    await off.http.get(USERS).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).expect(200);
  });
});

describe('API keys on the realtime client routes', () => {
  let api: FakeApi<PusherRequest>;
  let t: TestApp;
  beforeAll(async () => {
    api = fakePusherApi();
    await api.start();
    const port = Number(new URL(api.url).port);
    t = await startApp({
      env: { REALTIME_SECRET: APP.secret },
      settings: { realtimeChannel: { appId: APP.appId, key: APP.key, secret: { env: 'REALTIME_SECRET' }, cluster: 'eu', host: '127.0.0.1', port, useTLS: false, forwardRules: [] } } as never,
    });
  });
  afterAll(async () => {
    await t?.close();
    await api?.stop();
  });

  it('a key authorizes its store\'s channels and signs the connection in as its creator, within the key\'s roles', async () => {
    const { store, token } = await ownerOfNewStore(t);
    const { key } = await newKey(t, store, token);
    const narrow = await newKey(t, store, token, { name: 'user level', roles: ['tenantUser'] });
    const authorize = (k: string, channel: string) => t.http.post('/auth-api/realtime/auth').set('Authorization', `Bearer ${k}`).send({ socket_id: '123.456', channel_name: channel });

    const presence = await authorize(key, `presence-${store.codename}_lobby`).expect(200);
    expect(JSON.parse(presence.body.channel_data)).toEqual({ user_id: store.ownerId, user_info: { name: 'Store Owner' } });
    await authorize(key, `private-${store.codename}_admin-audit`).expect(200);
    // held to its roles: a tenantUser key is no admin, and no key leaves its store
    expectError(await authorize(narrow.key, `private-${store.codename}_admin-audit`), 403, 'RealtimeChannelForbidden');
    await authorize(narrow.key, `private-${store.codename}_user-${store.ownerId}`).expect(200);
    const other = await registerStore(t.http);
    expectError(await authorize(key, `private-${other.codename}_orders`), 403, 'RealtimeChannelForbidden');

    const signedIn = await t.http.post('/auth-api/realtime/user-auth').set('Authorization', `Bearer ${key}`).send({ socket_id: '123.456' }).expect(200);
    expect(JSON.parse(signedIn.body.user_data)).toEqual({ id: store.ownerId, name: 'Store Owner' });
    expectNoLoginIssued(signedIn);
  });
});
