import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createApp } from '../src/app.js';
import type { SettingsOverrides } from '../src/settings.js';
import type { Tenancy } from '../src/kernel/tenancy.settings.js';
import { connectSocket, listen, openSse, refusedSocket } from './event-clients.js';
import { expectError, login, PASSWORD, startApp, SUPER_ADMIN, unique, uniqueEmail, waitFor, type Login, type TestApp } from './helpers.js';

// A deployment with one organisation (settings tenancy: "single"): the root store is the
// organisation, its roles are superAdmin, admin and user, stores are neither registered nor
// targeted; logins, sessions, keys and user management work as in a store.

const HEADER = 'svc-store-codename';
const REGISTER_OWNER = '/auth-api/v1/registerstoreowner';
const REGISTER_USER = '/auth-api/v1/registerstoreuser';
const CREATE_USER = '/auth-api/users';
const USERS = '/auth-api/v1/users';
const CURRENT = '/auth-api/currentuser';
const KEYS = '/auth-api/v1/apikeys';
const GROUPS = '/auth-api/v1/usergroups';

function bearer(token: string): string {
  return `Bearer ${token}`;
}

function single(settings: SettingsOverrides = {}): Promise<TestApp> {
  return startApp({ settings: { tenancy: 'single', ...settings } });
}

async function rootStoreId(t: TestApp): Promise<string> {
  const [row] = await t.app.get(DataSource).query(`SELECT "id" FROM "stores" WHERE "codename" = 'root'`);
  return row.id;
}

// A person registering through the public user registration, no store named, logged in.
async function registeredUser(t: TestApp): Promise<{ id: string; email: string; login: Login; user: Record<string, unknown> }> {
  const email = uniqueEmail();
  const res = await t.http.post(REGISTER_USER).send({ email, password: PASSWORD, fullname: 'Org Member' }).expect(201);
  return { id: res.body.user.id, email, user: res.body.user, login: await login(t.http, email) };
}

// An organisation admin, created by the super administrator.
async function orgAdmin(t: TestApp, superAdmin: Login): Promise<{ id: string; login: Login }> {
  const email = uniqueEmail();
  const res = await t.http.post(CREATE_USER).set('Authorization', bearer(superAdmin.accessToken)).send({ email, password: PASSWORD, fullname: 'Org Admin', roleId: 'admin' }).expect(201);
  expect(res.body.user.roleId).toBe('admin');
  return { id: res.body.user.id, login: await login(t.http, email) };
}

describe('tenancy setting', () => {
  it('an unknown value stops the boot, naming settings.tenancy', async () => {
    await expect(startApp({ settings: { tenancy: 'dual' as Tenancy } })).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(/settings\.tenancy/) });
  });
});

describe('single-tenant mode', () => {
  let t: TestApp;
  let superAdmin: Login;
  let rootId: string;
  beforeAll(async () => {
    t = await single();
    superAdmin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    rootId = await rootStoreId(t);
  });
  afterAll(() => t?.close());

  it('user registration without a store: a `user` of the organisation, who logs in and reads itself as `user`', async () => {
    const { id, user, login: session } = await registeredUser(t);
    expect(user).toMatchObject({ id, roleId: 'user', storeId: rootId });
    expect(session.body).toMatchObject({ userId: id, roleId: 'user' });
    const me = await t.http.get(CURRENT).set('Authorization', bearer(session.accessToken)).expect(200);
    expect(me.body).toMatchObject({ userId: id, roleId: 'user' });
  });

  it('store registration: 404 StoreRegistrationUnavailable whatever the body, and no store is created', async () => {
    const name = unique('Second Org ');
    const full = await t.http.post(REGISTER_OWNER).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Would-be Owner', store: { name } });
    expectError(full, 404, 'StoreRegistrationUnavailable');
    // Refused before the body is looked at: the route does not exist here, whatever is sent.
    expectError(await t.http.post(REGISTER_OWNER).send({}), 404, 'StoreRegistrationUnavailable');
    const [{ n }] = await t.app.get(DataSource).query('SELECT count(*)::int AS n FROM stores WHERE name = $1', [name]);
    expect(n).toBe(0);
  });

  it('naming a store (header, query or body) is 400 StoreTargetingUnavailable, even one that exists', async () => {
    const email = uniqueEmail();
    const body = { email, password: PASSWORD, fullname: 'Org Member' };
    // `sample` exists on this database (seeded by multi-tenant boots): still refused.
    expectError(await t.http.post(REGISTER_USER).set(HEADER, 'sample').send(body), 400, 'StoreTargetingUnavailable');
    expectError(await t.http.post(REGISTER_USER).query({ _store: 'sample' }).send(body), 400, 'StoreTargetingUnavailable');
    expectError(await t.http.post(REGISTER_USER).send({ ...body, _store: 'nosuchstore' }), 400, 'StoreTargetingUnavailable');
    expectError(await t.http.post('/auth-api/login').set(HEADER, 'sample').send({ username: SUPER_ADMIN.username, password: SUPER_ADMIN.password }), 400, 'StoreTargetingUnavailable');
    expectError(await t.http.get(CURRENT).set(HEADER, 'sample').set('Authorization', bearer(superAdmin.accessToken)), 400, 'StoreTargetingUnavailable');
    // Nothing was registered by the refused calls.
    await t.http.post('/auth-api/login').send({ username: email, password: PASSWORD }).expect(401);
  });

  it('the event channel: a Socket.IO handshake or an SSE stream naming a store is refused the same way; none named opens', async () => {
    const base = await listen(t);
    const refused = await refusedSocket(base, 'live', { token: bearer(superAdmin.accessToken), tenantCodename: 'sample' });
    expect(refused.message).toBe('errMsg_StoreTargetingUnavailable');
    expect(refused.data).toMatchObject({ errCode: 'StoreTargetingUnavailable' });
    const sse = await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: bearer(superAdmin.accessToken), [HEADER]: 'sample' });
    await waitFor('the body', () => (sse.ended ? true : undefined));
    expect(sse.status).toBe(400);
    expect(JSON.parse(sse.body)).toMatchObject({ errCode: 'StoreTargetingUnavailable' });
    const socket = await connectSocket(base, 'live', { token: bearer(superAdmin.accessToken) });
    socket.close();
  });

  it('naming `root` is the same as naming none', async () => {
    const email = uniqueEmail();
    const res = await t.http.post(REGISTER_USER).set(HEADER, 'root').send({ email, password: PASSWORD, fullname: 'Org Member' }).expect(201);
    expect(res.body.user).toMatchObject({ roleId: 'user', storeId: rootId });
    const session = await login(t.http, email, PASSWORD, 'root');
    const me = await t.http.get(CURRENT).query({ _store: 'root' }).set('Authorization', bearer(session.accessToken)).expect(200);
    expect(me.body).toMatchObject({ userId: res.body.user.id, roleId: 'user' });
  });

  it('an admin manages users: creates (`user` by default, `admin` on request), lists, changes, deactivates, deletes', async () => {
    const admin = await orgAdmin(t, superAdmin);
    const auth = bearer(admin.login.accessToken);
    expect(admin.login.body).toMatchObject({ roleId: 'admin' });

    const email = uniqueEmail();
    const created = await t.http.post(CREATE_USER).set('Authorization', auth).send({ email, password: PASSWORD, fullname: 'Staff' }).expect(201);
    expect(created.body.user).toMatchObject({ roleId: 'user', storeId: rootId });
    const id = created.body.user.id;
    const other = await t.http.post(CREATE_USER).set('Authorization', auth).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Deputy', roleId: 'admin' }).expect(201);
    expect(other.body.user.roleId).toBe('admin');

    const list = await t.http.get(USERS).set('Authorization', auth).expect(200);
    expect(list.body.dataName).toBe('users');
    expect(list.body.users.length).toBeGreaterThan(0);
    expect((await t.http.get(`${USERS}/${id}`).set('Authorization', auth).expect(200)).body.user).toMatchObject({ id, roleId: 'user' });

    const promoted = await t.http.patch(`${USERS}/${id}`).set('Authorization', auth).send({ roleId: 'admin', fullname: 'Staff Lead' }).expect(200);
    expect(promoted.body.user).toMatchObject({ roleId: 'admin', fullname: 'Staff Lead' });
    await t.http.patch(`${USERS}/${id}`).set('Authorization', auth).send({ roleId: 'user' }).expect(200);

    // The multi-tenant role sets, and the super administrator's role, are not the admin's to give.
    for (const roleId of ['superAdmin', 'tenantAdmin', 'tenantOwner', 'saasAdmin', 'saasUser']) {
      expectError(await t.http.patch(`${USERS}/${id}`).set('Authorization', auth).send({ roleId }), 403, 'RoleNotAssignable');
    }
    // Nor may an admin change the super administrator.
    expectError(await t.http.patch(`${USERS}/${superAdmin.userId}`).set('Authorization', auth).send({ fullname: 'Taken Over' }), 403, 'Forbidden');

    await t.http.patch(`${USERS}/${id}`).set('Authorization', auth).send({ isActive: false }).expect(200);
    expectError(await t.http.post('/auth-api/login').send({ username: email, password: PASSWORD }), 403, 'UserInactive');
    await t.http.delete(`${USERS}/${id}`).set('Authorization', auth).expect(200);
    expectError(await t.http.get(`${USERS}/${id}`).set('Authorization', auth), 404, 'UserNotFound');
  });

  it('an admin may not create a super administrator', async () => {
    const admin = await orgAdmin(t, superAdmin);
    const refused = await t.http.post(CREATE_USER).set('Authorization', bearer(admin.login.accessToken)).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'No', roleId: 'superAdmin' });
    expectError(refused, 403, 'RoleNotAssignable');
  });

  it('a `user` cannot manage users, but changes its own profile', async () => {
    const me = await registeredUser(t);
    const peer = await registeredUser(t);
    const auth = bearer(me.login.accessToken);
    expectError(await t.http.get(USERS).set('Authorization', auth), 403, 'Forbidden');
    expectError(await t.http.post(CREATE_USER).set('Authorization', auth).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'No' }), 403, 'Forbidden');
    expectError(await t.http.get(`${USERS}/${peer.id}`).set('Authorization', auth), 403, 'Forbidden');
    expectError(await t.http.patch(`${USERS}/${peer.id}`).set('Authorization', auth).send({ fullname: 'Renamed' }), 403, 'Forbidden');
    expectError(await t.http.delete(`${USERS}/${peer.id}`).set('Authorization', auth), 403, 'Forbidden');
    expectError(await t.http.patch(`${USERS}/${me.id}`).set('Authorization', auth).send({ roleId: 'admin' }), 403, 'RoleNotAssignable');
    const own = await t.http.patch(`${USERS}/${me.id}`).set('Authorization', auth).send({ fullname: 'Renamed Me' }).expect(200);
    expect(own.body.user).toMatchObject({ fullname: 'Renamed Me', roleId: 'user' });
  });

  it('API keys: a user\'s key acts as `user`, an admin\'s as `admin`; a key with a store named is refused', async () => {
    const member = await registeredUser(t);
    const userKey = await t.http.post(KEYS).set('Authorization', bearer(member.login.accessToken)).send({ name: 'member job' }).expect(201);
    expect(userKey.body.apiKey.roles).toEqual(['user']);
    const asUser = bearer(userKey.body.apiKey.key);
    expect((await t.http.get(CURRENT).set('Authorization', asUser).expect(200)).body).toMatchObject({ userId: member.id, roleId: 'user' });
    expectError(await t.http.get(USERS).set('Authorization', asUser), 403, 'Forbidden');

    const admin = await orgAdmin(t, superAdmin);
    const adminKey = await t.http.post(KEYS).set('Authorization', bearer(admin.login.accessToken)).send({ name: 'admin job' }).expect(201);
    expect(adminKey.body.apiKey.roles).toEqual(['admin']);
    // A key may carry fewer roles than its creator: the admin's `user` key is a plain user.
    const narrowed = await t.http.post(KEYS).set('Authorization', bearer(admin.login.accessToken)).send({ name: 'read only', roles: ['user'] }).expect(201);
    expect(narrowed.body.apiKey.roles).toEqual(['user']);
    expectError(await t.http.get(USERS).set('Authorization', bearer(narrowed.body.apiKey.key)), 403, 'Forbidden');

    const asAdmin = bearer(adminKey.body.apiKey.key);
    expect((await t.http.get(USERS).set('Authorization', asAdmin).expect(200)).body.dataName).toBe('users');
    // The admin's keys include the member's: admins see the organisation's keys.
    const keys = await t.http.get(KEYS).set('Authorization', bearer(admin.login.accessToken)).query({ pageRowCount: 100 }).expect(200);
    expect(keys.body.apiKeys.length).toBeGreaterThan(0);
    expectError(await t.http.get(USERS).set('Authorization', asAdmin).set(HEADER, 'sample'), 400, 'StoreTargetingUnavailable');
  });

  it('user groups (tenant-level groups on): the organisation\'s admin manages them, a `user` does not', async () => {
    const grouped = await single({ userGroupsActive: true, userGroupsInTenantLevel: true });
    try {
      const admin = await orgAdmin(grouped, await login(grouped.http, SUPER_ADMIN.username, SUPER_ADMIN.password));
      const member = await registeredUser(grouped);
      const group = await grouped.http.post(GROUPS).set('Authorization', bearer(admin.login.accessToken)).send({ groupName: 'Support' }).expect(201);
      await grouped.http.post('/auth-api/v1/usergroupmembers').set('Authorization', bearer(admin.login.accessToken)).send({ groupId: group.body.userGroup.id, userId: member.id }).expect(201);
      expectError(await grouped.http.post(GROUPS).set('Authorization', bearer(member.login.accessToken)).send({ groupName: 'Mine' }), 403, 'Forbidden');
      await grouped.http.delete(`${GROUPS}/${group.body.userGroup.id}`).set('Authorization', bearer(admin.login.accessToken)).expect(200);
    } finally {
      await grouped.close();
    }
  });
});

describe('single-tenant mode with userRegisterIsPublic', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await single({ userRegisterIsPublic: true });
  });
  afterAll(() => t?.close());

  it('POST /users without a token registers a `user` of the organisation (not a SaaS user)', async () => {
    const email = uniqueEmail();
    const res = await t.http.post(CREATE_USER).send({ email, password: PASSWORD, fullname: 'Walk-in' }).expect(201);
    expect(res.body.user).toMatchObject({ roleId: 'user', storeId: await rootStoreId(t) });
    expect((await login(t.http, email)).body).toMatchObject({ roleId: 'user' });
  });
});

// Where the two modes differ, side by side: the same calls on a multi-tenant and a
// single-tenant app.
describe.each([
  { tenancy: 'multi' as const, ownerRegistration: 201, rootUserRegistration: 403, namedSample: 200, rootDefaultRole: 'saasUser' },
  { tenancy: 'single' as const, ownerRegistration: 404, rootUserRegistration: 201, namedSample: 400, rootDefaultRole: 'user' },
])('tenancy $tenancy', ({ tenancy, ownerRegistration, rootUserRegistration, namedSample, rootDefaultRole }) => {
  let t: TestApp;
  let superAdmin: Login;
  beforeAll(async () => {
    t = await startApp({ settings: { tenancy } });
    superAdmin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
  });
  afterAll(() => t?.close());

  it(`store-owner registration answers ${ownerRegistration}`, async () => {
    const res = await t.http.post(REGISTER_OWNER).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Owner', store: { name: 'Mode Store' } });
    expect(res.status).toBe(ownerRegistration);
    if (ownerRegistration === 201) expect(res.body.user.roleId).toBe('tenantOwner');
  });

  it(`user registration with no store named answers ${rootUserRegistration}`, async () => {
    const res = await t.http.post(REGISTER_USER).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Member' });
    expect(res.status).toBe(rootUserRegistration);
    if (rootUserRegistration === 201) expect(res.body.user.roleId).toBe('user');
    else expect(res.body.errCode).toBe('StoreLevelOnly');
  });

  it(`a request naming the sample store answers ${namedSample}`, async () => {
    const res = await t.http.get('/auth-api/v1/briefstores').set(HEADER, 'sample');
    expect(res.status).toBe(namedSample);
  });

  it(`a user created at root by the super administrator is a ${rootDefaultRole}`, async () => {
    const res = await t.http.post(CREATE_USER).set('Authorization', bearer(superAdmin.accessToken)).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Root Member' }).expect(201);
    expect(res.body.user.roleId).toBe(rootDefaultRole);
  });
});

describe('single-tenant seed on a fresh database', () => {
  // Boots its own embedded database (initdb included): seconds on a quiet machine.
  jest.setTimeout(120_000);
  it('creates the root store and one super administrator, and no sample store', async () => {
    const running = await createApp({ env: { NODE_ENV: 'test', LOG_LEVEL: 'silent', BCRYPT_COST: '4', DATA_DIR: ':memory:' }, settings: { tenancy: 'single' } });
    try {
      const db = running.app.get(DataSource);
      const stores: Array<{ codename: string }> = await db.query('SELECT codename FROM stores ORDER BY codename');
      expect(stores.map((s) => s.codename)).toEqual(['root']);
      const users: Array<{ roles: string[] }> = await db.query('SELECT roles FROM users');
      expect(users.map((u) => u.roles)).toEqual([['superAdmin']]);
    } finally {
      await running.close();
    }
  });
});
