import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import type { SettingsOverrides } from '../src/settings.js';
import { login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, type Login, type RegisteredStore, type TestApp } from './helpers.js';

const HEADER = 'svc-store-codename';
const USERS = '/auth-api/users';
const V1 = '/auth-api/v1/users';
const CURRENT = '/auth-api/currentuser';
const NEW_PASSWORD = 'a brand new passphrase';

// No custom user properties in any app of this file (they are declared on the DTOs at boot).
function start(settings: SettingsOverrides = {}): Promise<TestApp> {
  return startApp({ settings });
}

function bearer(token: string): string {
  return `Bearer ${token}`;
}

interface Store extends RegisteredStore {
  owner: Login;
}

// A fresh store with its owner logged in.
async function ownedStore(t: TestApp): Promise<Store> {
  const store = await registerStore(t.http);
  return { ...store, owner: await login(t.http, store.ownerEmail, PASSWORD, store.codename) };
}

interface Member {
  id: string;
  email: string;
  user: Record<string, unknown>;
}

// A user created in the store by one of its admins (the owner unless `token` says otherwise).
async function addUser(t: TestApp, store: Store, body: Record<string, unknown> = {}, token = store.owner.accessToken): Promise<Member> {
  const email = uniqueEmail();
  const res = await t.http
    .post(USERS)
    .set(HEADER, store.codename)
    .set('Authorization', bearer(token))
    .send({ email, password: PASSWORD, fullname: 'Member', ...body })
    .expect(201);
  return { id: res.body.user.id, email, user: res.body.user };
}

async function memberLogin(t: TestApp, store: Store, member: Member, password = PASSWORD): Promise<Login> {
  return login(t.http, member.email, password, store.codename);
}

function get(t: TestApp, store: { codename: string }, path: string, token: string) {
  return t.http.get(path).set(HEADER, store.codename).set('Authorization', bearer(token));
}

function patch(t: TestApp, store: { codename: string }, id: string, token: string, body: Record<string, unknown>) {
  return t.http.patch(`${V1}/${id}`).set(HEADER, store.codename).set('Authorization', bearer(token)).send(body);
}

function del(t: TestApp, store: { codename: string }, id: string, token: string) {
  return t.http.delete(`${V1}/${id}`).set(HEADER, store.codename).set('Authorization', bearer(token));
}

async function rootStoreId(t: TestApp): Promise<string> {
  const [row] = await t.app.get(DataSource).query(`SELECT "id" FROM "stores" WHERE "codename" = 'root'`);
  return row.id;
}

describe('user management (default settings: userRegisterIsPublic false)', () => {
  let t: TestApp;
  let superAdmin: Login;
  beforeAll(async () => {
    t = await start();
    superAdmin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
  });
  afterAll(() => t.close());

  describe('POST /auth-api/users in a store', () => {
    it('needs a token: 401', async () => {
      const store = await ownedStore(t);
      const email = uniqueEmail();
      const res = await t.http.post(USERS).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Anon' }).expect(401);
      expect(res.body).toMatchObject({ result: 'ERR', status: 401, errCode: 'Unauthorized' });
      expect(typeof res.body.requestId).toBe('string');
      expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    });

    it('refuses a tenantUser: 403', async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const token = (await memberLogin(t, store, member)).accessToken;
      const email = uniqueEmail();
      const res = await t.http.post(USERS).set(HEADER, store.codename).set('Authorization', bearer(token)).send({ email, password: PASSWORD, fullname: 'X' }).expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'Forbidden' });
      expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    });

    it('lets the store owner create a tenantUser, owned by the owner, in the store', async () => {
      const store = await ownedStore(t);
      const email = uniqueEmail();
      const res = await t.http
        .post(USERS)
        .set(HEADER, store.codename)
        .set('Authorization', bearer(store.owner.accessToken))
        .send({ email, password: PASSWORD, fullname: 'New Member' })
        .expect(201);
      expect(res.body).toMatchObject({
        status: 'OK',
        statusCode: '201',
        dataName: 'user',
        action: 'create',
        method: 'POST',
        rowCount: 1,
        userId: store.ownerId,
        sessionId: store.owner.sessionId,
      });
      expect(typeof res.body.requestId).toBe('string');
      expect(typeof res.body.appVersion).toBe('string');
      const { user } = res.body;
      expect(user).toMatchObject({ email, fullname: 'New Member', roleId: 'tenantUser', storeId: store.storeId, _owner: store.ownerId, isActive: true, recordVersion: 1 });
      expect(user.password).toBeUndefined();
      expect(user.passwordHash).toBeUndefined();
      // the new user can log in to that store, and only there
      const session = await login(t.http, email, PASSWORD, store.codename);
      expect(session.userId).toBe(user.id);
      await t.http.post('/auth-api/login').send({ username: email, password: PASSWORD }).expect(401);
    });

    it('lets the owner grant tenantAdmin', async () => {
      const store = await ownedStore(t);
      const admin = await addUser(t, store, { roleId: 'tenantAdmin' });
      expect(admin.user.roleId).toBe('tenantAdmin');
      const session = await memberLogin(t, store, admin);
      expect(session.body.roleId).toBe('tenantAdmin');
    });

    it('refuses tenantOwner, superAdmin and unknown roles: 403 RoleNotAssignable', async () => {
      const store = await ownedStore(t);
      for (const roleId of ['tenantOwner', 'superAdmin', 'saasAdmin', 'editor', 'nonsense']) {
        const email = uniqueEmail();
        const res = await t.http
          .post(USERS)
          .set(HEADER, store.codename)
          .set('Authorization', bearer(store.owner.accessToken))
          .send({ email, password: PASSWORD, fullname: 'X', roleId })
          .expect(403);
        expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'RoleNotAssignable' });
        expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
      }
    });

    it('refuses a roleId array while users hold a single role: 400', async () => {
      const store = await ownedStore(t);
      const res = await t.http
        .post(USERS)
        .set(HEADER, store.codename)
        .set('Authorization', bearer(store.owner.accessToken))
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'X', roleId: ['tenantAdmin', 'tenantUser'] })
        .expect(400);
      expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
      expect(res.body.detail).toMatch(/roleId/);
    });

    it('refuses a token of another store: 403 TenantMismatch', async () => {
      const [a, b] = [await ownedStore(t), await ownedStore(t)];
      const email = uniqueEmail();
      const res = await t.http
        .post(USERS)
        .set(HEADER, b.codename)
        .set('Authorization', bearer(a.owner.accessToken))
        .send({ email, password: PASSWORD, fullname: 'X', roleId: 'tenantAdmin' })
        .expect(403);
      expect(res.body.errCode).toBe('TenantMismatch');
      expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    });

    it('refuses a duplicate email in the store: 409 DuplicateIdentifier', async () => {
      const store = await ownedStore(t);
      const res = await t.http
        .post(USERS)
        .set(HEADER, store.codename)
        .set('Authorization', bearer(store.owner.accessToken))
        .send({ email: store.ownerEmail, password: PASSWORD, fullname: 'Twin' })
        .expect(409);
      expect(res.body.errCode).toBe('DuplicateIdentifier');
    });
  });

  describe('POST /auth-api/users at the SaaS level (root)', () => {
    it('needs a token: 401', async () => {
      const res = await t.http.post(USERS).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Anon' }).expect(401);
      expect(res.body).toMatchObject({ result: 'ERR', status: 401 });
    });

    it("refuses a store owner's token targeting root: 403 TenantMismatch", async () => {
      const store = await ownedStore(t);
      const email = uniqueEmail();
      const res = await t.http.post(USERS).set('Authorization', bearer(store.owner.accessToken)).send({ email, password: PASSWORD, fullname: 'X' }).expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'TenantMismatch' });
      expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    });

    it('lets the super admin create a saasUser by default, or a saasAdmin', async () => {
      const rootId = await rootStoreId(t);
      const email = uniqueEmail();
      const res = await t.http.post(USERS).set('Authorization', bearer(superAdmin.accessToken)).send({ email, password: PASSWORD, fullname: 'Saas User' }).expect(201);
      expect(res.body).toMatchObject({ dataName: 'user', action: 'create', userId: superAdmin.userId });
      expect(res.body.user).toMatchObject({ email, roleId: 'saasUser', storeId: rootId, _owner: superAdmin.userId });
      expect((await login(t.http, email)).body).toMatchObject({ roleId: 'saasUser', tenantId: rootId });

      const admin = await t.http
        .post(USERS)
        .set('Authorization', bearer(superAdmin.accessToken))
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Saas Admin', roleId: 'saasAdmin' })
        .expect(201);
      expect(admin.body.user).toMatchObject({ roleId: 'saasAdmin', storeId: rootId });
    });

    it('refuses tenant roles at root: 403 RoleNotAssignable', async () => {
      const res = await t.http
        .post(USERS)
        .set('Authorization', bearer(superAdmin.accessToken))
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'X', roleId: 'tenantAdmin' })
        .expect(403);
      expect(res.body.errCode).toBe('RoleNotAssignable');
    });

    it('lets a saasAdmin create a saasUser, but not a saasUser', async () => {
      const adminEmail = uniqueEmail();
      await t.http
        .post(USERS)
        .set('Authorization', bearer(superAdmin.accessToken))
        .send({ email: adminEmail, password: PASSWORD, fullname: 'Saas Admin', roleId: 'saasAdmin' })
        .expect(201);
      const saasAdmin = await login(t.http, adminEmail);

      const userEmail = uniqueEmail();
      const created = await t.http.post(USERS).set('Authorization', bearer(saasAdmin.accessToken)).send({ email: userEmail, password: PASSWORD, fullname: 'Saas User' }).expect(201);
      expect(created.body.user).toMatchObject({ roleId: 'saasUser', _owner: saasAdmin.userId });
      // a saasAdmin may not mint a super administrator
      const escalate = await t.http
        .post(USERS)
        .set('Authorization', bearer(saasAdmin.accessToken))
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'X', roleId: 'superAdmin' })
        .expect(403);
      expect(escalate.body.errCode).toBe('RoleNotAssignable');

      const saasUser = await login(t.http, userEmail);
      const email = uniqueEmail();
      const refused = await t.http.post(USERS).set('Authorization', bearer(saasUser.accessToken)).send({ email, password: PASSWORD, fullname: 'X' }).expect(403);
      expect(refused.body).toMatchObject({ result: 'ERR', status: 403 });
      expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    });
  });

  describe('GET /auth-api/v1/users', () => {
    it("lists the store's users, and only them, in the list envelope", async () => {
      const [store, other] = [await ownedStore(t), await ownedStore(t)];
      const a = await addUser(t, store);
      const b = await addUser(t, store, { roleId: 'tenantAdmin' });
      const foreign = await addUser(t, other);

      const res = await get(t, store, V1, store.owner.accessToken).expect(200);
      expect(res.body).toMatchObject({
        status: 'OK',
        statusCode: '200',
        dataName: 'users',
        action: 'list',
        method: 'GET',
        rowCount: 3,
        userId: store.ownerId,
        sessionId: store.owner.sessionId,
        paging: { pageNumber: 1, pageRowCount: 20, totalRowCount: 3, pageCount: 1 },
        filters: [],
        uiPermissions: [],
      });
      const ids = res.body.users.map((u: { id: string }) => u.id).sort();
      expect(ids).toEqual([store.ownerId, a.id, b.id].sort());
      expect(ids).not.toContain(foreign.id);
      expect(ids).not.toContain(other.ownerId);
      for (const u of res.body.users) {
        expect(u.storeId).toBe(store.storeId);
        expect(u.passwordHash).toBeUndefined();
        expect(u.password).toBeUndefined();
      }

      // a tenantAdmin sees the same list
      const admin = await memberLogin(t, store, b);
      const asAdmin = await get(t, store, V1, admin.accessToken).expect(200);
      expect(asAdmin.body.users.map((u: { id: string }) => u.id).sort()).toEqual(ids);
    });

    it('pages with pageRowCount and pageNumber', async () => {
      const store = await ownedStore(t);
      const added = [await addUser(t, store), await addUser(t, store)];
      const all = [store.ownerId, ...added.map((u) => u.id)].sort();

      const first = await get(t, store, `${V1}?pageRowCount=2`, store.owner.accessToken).expect(200);
      expect(first.body.paging).toEqual({ pageNumber: 1, pageRowCount: 2, totalRowCount: 3, pageCount: 2 });
      expect(first.body.rowCount).toBe(2);
      const second = await get(t, store, `${V1}?pageRowCount=2&pageNumber=2`, store.owner.accessToken).expect(200);
      expect(second.body.paging).toEqual({ pageNumber: 2, pageRowCount: 2, totalRowCount: 3, pageCount: 2 });
      expect(second.body.rowCount).toBe(1);
      const seen = [...first.body.users, ...second.body.users].map((u: { id: string }) => u.id).sort();
      expect(seen).toEqual(all);

      const past = await get(t, store, `${V1}?pageRowCount=2&pageNumber=3`, store.owner.accessToken).expect(200);
      expect(past.body.users).toEqual([]);
      expect(past.body.rowCount).toBe(0);

      const bad = await get(t, store, `${V1}?pageRowCount=0`, store.owner.accessToken).expect(400);
      expect(bad.body.errCode).toBe('ValidationFailed');
    });

    it('refuses a tenantUser: 403', async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const res = await get(t, store, V1, (await memberLogin(t, store, member)).accessToken).expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'Forbidden' });
      expect(res.body.users).toBeUndefined();
    });

    it('needs a token: 401', async () => {
      const store = await ownedStore(t);
      await t.http.get(V1).set(HEADER, store.codename).expect(401);
    });

    it("lets the super admin list a store's users", async () => {
      const store = await ownedStore(t);
      const res = await get(t, store, V1, superAdmin.accessToken).expect(200);
      expect(res.body.users.map((u: { id: string }) => u.id)).toEqual([store.ownerId]);
    });
  });

  describe('GET /auth-api/v1/users/:id', () => {
    it('lets an admin read any user of the store', async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const res = await get(t, store, `${V1}/${member.id}`, store.owner.accessToken).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', dataName: 'user', action: 'get', method: 'GET', rowCount: 1, userId: store.ownerId });
      expect(res.body.user).toEqual(member.user);
    });

    it('lets a user read itself, but not another user: 403', async () => {
      const store = await ownedStore(t);
      const [me, other] = [await addUser(t, store), await addUser(t, store)];
      const session = await memberLogin(t, store, me);
      const mine = await get(t, store, `${V1}/${me.id}`, session.accessToken).expect(200);
      expect(mine.body.user).toMatchObject({ id: me.id, email: me.email });
      expect(mine.body).toMatchObject({ userId: me.id, sessionId: session.sessionId });

      const theirs = await get(t, store, `${V1}/${other.id}`, session.accessToken).expect(403);
      expect(theirs.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'Forbidden' });
      expect(theirs.body.user).toBeUndefined();
      const owner = await get(t, store, `${V1}/${store.ownerId}`, session.accessToken).expect(403);
      expect(owner.body.errCode).toBe('Forbidden');
    });

    it('answers 404 UserNotFound for a user of another store; the super admin finds it in its own store', async () => {
      const [store, other] = [await ownedStore(t), await ownedStore(t)];
      const foreign = await addUser(t, other);
      const res = await get(t, store, `${V1}/${foreign.id}`, store.owner.accessToken).expect(404);
      expect(res.body).toMatchObject({ result: 'ERR', status: 404, errCode: 'UserNotFound' });
      expect(JSON.stringify(res.body)).not.toContain(foreign.email);

      const found = await get(t, other, `${V1}/${foreign.id}`, superAdmin.accessToken).expect(200);
      expect(found.body.user).toMatchObject({ id: foreign.id, storeId: other.storeId });
      // the super admin targeting the wrong store does not see it either
      await get(t, store, `${V1}/${foreign.id}`, superAdmin.accessToken).expect(404);
    });

    it('refuses a malformed id: 400', async () => {
      const store = await ownedStore(t);
      const res = await get(t, store, `${V1}/not-a-uuid`, store.owner.accessToken).expect(400);
      expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
    });
  });

  describe('PATCH /auth-api/v1/users/:id', () => {
    it('lets a user change its own fullname and avatar; recordVersion increases; the session shows the new name', async () => {
      const store = await ownedStore(t);
      const me = await addUser(t, store);
      const session = await memberLogin(t, store, me);
      await get(t, store, CURRENT, session.accessToken).expect(200); // the session is cached now

      const avatar = 'https://cdn.example.com/me.png';
      const res = await patch(t, store, me.id, session.accessToken, { fullname: 'Renamed Person', avatar }).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', statusCode: '200', dataName: 'user', action: 'update', method: 'PATCH', rowCount: 1, userId: me.id });
      expect(res.body.user).toMatchObject({ id: me.id, fullname: 'Renamed Person', avatar, roleId: 'tenantUser', recordVersion: (me.user.recordVersion as number) + 1 });
      expect(Date.parse(res.body.user.updatedAt)).toBeGreaterThanOrEqual(Date.parse(me.user.updatedAt as string));

      const read = await get(t, store, `${V1}/${me.id}`, session.accessToken).expect(200);
      expect(read.body.user).toMatchObject({ fullname: 'Renamed Person', avatar, recordVersion: res.body.user.recordVersion });
      const current = await get(t, store, CURRENT, session.accessToken).expect(200);
      expect(current.body.fullname).toBe('Renamed Person');

      const again = await patch(t, store, me.id, session.accessToken, { fullname: 'Third Name' }).expect(200);
      expect(again.body.user.recordVersion).toBe(res.body.user.recordVersion + 1);
    });

    it('refuses a user changing another user: 403, and nothing changes', async () => {
      const store = await ownedStore(t);
      const [me, other] = [await addUser(t, store), await addUser(t, store)];
      const session = await memberLogin(t, store, me);
      const res = await patch(t, store, other.id, session.accessToken, { fullname: 'Hijacked' }).expect(403);
      expect(res.body.errCode).toBe('Forbidden');
      const read = await get(t, store, `${V1}/${other.id}`, store.owner.accessToken).expect(200);
      expect(read.body.user.fullname).toBe('Member');
    });

    it('refuses roleId or isActive on your own profile: 403 RoleNotAssignable', async () => {
      const store = await ownedStore(t);
      const me = await addUser(t, store);
      const session = await memberLogin(t, store, me);
      const role = await patch(t, store, me.id, session.accessToken, { roleId: 'tenantAdmin' }).expect(403);
      expect(role.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'RoleNotAssignable' });
      const active = await patch(t, store, me.id, session.accessToken, { isActive: true }).expect(403);
      expect(active.body.errCode).toBe('RoleNotAssignable');
      // an owner may not change its own role or flags either
      const owner = await patch(t, store, store.ownerId, store.owner.accessToken, { roleId: 'tenantAdmin' }).expect(403);
      expect(owner.body.errCode).toBe('RoleNotAssignable');

      const read = await get(t, store, `${V1}/${me.id}`, session.accessToken).expect(200);
      expect(read.body.user).toMatchObject({ roleId: 'tenantUser', recordVersion: me.user.recordVersion });
      await get(t, store, V1, session.accessToken).expect(403);
    });

    it('refuses storeId, email and emailVerified: 400 UnknownField', async () => {
      const store = await ownedStore(t);
      const other = await ownedStore(t);
      const me = await addUser(t, store);
      const session = await memberLogin(t, store, me);
      for (const body of [{ storeId: other.storeId }, { email: uniqueEmail() }, { emailVerified: true }, { _owner: other.ownerId }]) {
        const res = await patch(t, store, me.id, session.accessToken, body).expect(400);
        expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'UnknownField' });
        expect(res.body.detail).toContain(Object.keys(body)[0]);
      }
      // an admin cannot either
      const byOwner = await patch(t, store, me.id, store.owner.accessToken, { storeId: other.storeId }).expect(400);
      expect(byOwner.body.errCode).toBe('UnknownField');
      const read = await get(t, store, `${V1}/${me.id}`, session.accessToken).expect(200);
      expect(read.body.user).toMatchObject({ storeId: store.storeId, email: me.email, emailVerified: false, recordVersion: me.user.recordVersion });
    });

    it('changes your own password only with the current one, then ends your other sessions', async () => {
      const store = await ownedStore(t);
      const me = await addUser(t, store);
      const current = await memberLogin(t, store, me);
      const elsewhere = await memberLogin(t, store, me);

      const missing = await patch(t, store, me.id, current.accessToken, { password: NEW_PASSWORD }).expect(403);
      expect(missing.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'WrongCurrentPassword' });
      const wrong = await patch(t, store, me.id, current.accessToken, { password: NEW_PASSWORD, currentPassword: 'not my password' }).expect(403);
      expect(wrong.body.errCode).toBe('WrongCurrentPassword');
      // refused attempts change nothing: both sessions live, the old password still works
      await get(t, store, CURRENT, elsewhere.accessToken).expect(200);
      await memberLogin(t, store, me);

      const weak = await patch(t, store, me.id, current.accessToken, { password: 'short', currentPassword: PASSWORD }).expect(400);
      expect(weak.body.errCode).toBe('WeakPassword');

      await patch(t, store, me.id, current.accessToken, { password: NEW_PASSWORD, currentPassword: PASSWORD }).expect(200);
      await get(t, store, CURRENT, elsewhere.accessToken).expect(401);
      const still = await get(t, store, CURRENT, current.accessToken).expect(200);
      expect(still.body.sessionId).toBe(current.sessionId);

      await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: me.email, password: PASSWORD }).expect(401);
      const fresh = await memberLogin(t, store, me, NEW_PASSWORD);
      expect(fresh.userId).toBe(me.id);
    });

    it("lets an admin set another user's password without the current one, ending all its sessions", async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const session = await memberLogin(t, store, member);
      await patch(t, store, member.id, store.owner.accessToken, { password: NEW_PASSWORD }).expect(200);
      await get(t, store, CURRENT, session.accessToken).expect(401);
      await memberLogin(t, store, member, NEW_PASSWORD);
      // the admin's own session is untouched
      await get(t, store, CURRENT, store.owner.accessToken).expect(200);
    });

    it("shows a role change in the user's current session at once", async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const session = await memberLogin(t, store, member);
      const before = await get(t, store, CURRENT, session.accessToken).expect(200);
      expect(before.body.roleId).toBe('tenantUser');
      await get(t, store, V1, session.accessToken).expect(403);

      const res = await patch(t, store, member.id, store.owner.accessToken, { roleId: 'tenantAdmin' }).expect(200);
      expect(res.body.user.roleId).toBe('tenantAdmin');
      const after = await get(t, store, CURRENT, session.accessToken).expect(200);
      expect(after.body).toMatchObject({ roleId: 'tenantAdmin', sessionId: session.sessionId });
      await get(t, store, V1, session.accessToken).expect(200);

      // and back: the admin rights go at once
      await patch(t, store, member.id, store.owner.accessToken, { roleId: 'tenantUser' }).expect(200);
      await get(t, store, V1, session.accessToken).expect(403);
    });

    it('lets an admin deactivate a user: its tokens fail at once and its login answers 403 UserInactive', async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const session = await memberLogin(t, store, member);
      await get(t, store, CURRENT, session.accessToken).expect(200);

      const res = await patch(t, store, member.id, store.owner.accessToken, { isActive: false }).expect(200);
      expect(res.body.user.isActive).toBe(false);
      await get(t, store, CURRENT, session.accessToken).expect(401);
      await get(t, store, `${V1}/${member.id}`, session.accessToken).expect(401);
      const refused = await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: member.email, password: PASSWORD }).expect(403);
      expect(refused.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'UserInactive' });

      await patch(t, store, member.id, store.owner.accessToken, { isActive: true }).expect(200);
      await memberLogin(t, store, member);
    });

    it('refuses a tenantAdmin changing the tenantOwner: 403, and the owner is unchanged', async () => {
      const store = await ownedStore(t);
      const admin = await addUser(t, store, { roleId: 'tenantAdmin' });
      const session = await memberLogin(t, store, admin);
      for (const body of [{ fullname: 'Demoted' }, { roleId: 'tenantUser' }, { isActive: false }, { password: NEW_PASSWORD }]) {
        const res = await patch(t, store, store.ownerId, session.accessToken, body).expect(403);
        expect(res.body).toMatchObject({ result: 'ERR', status: 403 });
      }
      const owner = await get(t, store, `${V1}/${store.ownerId}`, store.owner.accessToken).expect(200);
      expect(owner.body.user).toMatchObject({ fullname: 'Store Owner', roleId: 'tenantOwner', isActive: true, recordVersion: 1 });
      await get(t, store, CURRENT, store.owner.accessToken).expect(200);
    });

    it('refuses a tenantAdmin granting tenantOwner: 403 RoleNotAssignable', async () => {
      const store = await ownedStore(t);
      const admin = await addUser(t, store, { roleId: 'tenantAdmin' });
      const member = await addUser(t, store);
      const session = await memberLogin(t, store, admin);
      const res = await patch(t, store, member.id, session.accessToken, { roleId: 'tenantOwner' }).expect(403);
      expect(res.body.errCode).toBe('RoleNotAssignable');
      await patch(t, store, member.id, session.accessToken, { fullname: 'Renamed by admin' }).expect(200);
    });

    it('answers 404 for a user of another store, leaving it unchanged', async () => {
      const [store, other] = [await ownedStore(t), await ownedStore(t)];
      const foreign = await addUser(t, other);
      const res = await patch(t, store, foreign.id, store.owner.accessToken, { fullname: 'Reached' }).expect(404);
      expect(res.body.errCode).toBe('UserNotFound');
      const read = await get(t, other, `${V1}/${foreign.id}`, other.owner.accessToken).expect(200);
      expect(read.body.user.fullname).toBe('Member');
    });
  });

  describe('PATCH with null and text that is not Unicode', () => {
    it.each(['password', 'isActive', 'fullname', 'currentPassword'])('%s: null → 400 ValidationFailed, nothing stored', async (field) => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const res = await patch(t, store, member.id, store.owner.accessToken, { [field]: null });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ errCode: 'ValidationFailed', message: 'errMsg_ValidationFailed', detail: expect.stringContaining(field) });
      const read = await get(t, store, `${V1}/${member.id}`, store.owner.accessToken).expect(200);
      expect(read.body.user).toMatchObject({ fullname: 'Member', isActive: true, recordVersion: member.user.recordVersion });
      await memberLogin(t, store, member); // the password is unchanged
    });

    it('avatar: null → 200, back to a generated avatar', async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store, { avatar: 'https://cdn.example.com/mine.png' });
      const res = await patch(t, store, member.id, store.owner.accessToken, { avatar: null }).expect(200);
      expect(res.body.user.avatar).toMatch(/\/auth-api\/avatars\/[a-f0-9]{32}\.svg$/);
    });

    it('POST /users with a lone surrogate in email → 400, not a 500', async () => {
      const store = await ownedStore(t);
      for (const email of ['\ud800', 'a\udfff@example.com']) {
        const res = await t.http
          .post(USERS)
          .set(HEADER, store.codename)
          .set('Authorization', bearer(store.owner.accessToken))
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ email, password: PASSWORD, fullname: 'Member' }));
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ errCode: 'ValidationFailed', detail: expect.stringMatching(/^email /) });
      }
    });
  });

  describe('DELETE /auth-api/v1/users/:id', () => {
    it('lets an admin delete a user: its token fails and it is gone', async () => {
      const store = await ownedStore(t);
      const member = await addUser(t, store);
      const session = await memberLogin(t, store, member);
      const res = await del(t, store, member.id, store.owner.accessToken).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', statusCode: '200', dataName: 'user', action: 'delete', method: 'DELETE', user: { id: member.id } });
      await get(t, store, CURRENT, session.accessToken).expect(401);
      const gone = await get(t, store, `${V1}/${member.id}`, store.owner.accessToken).expect(404);
      expect(gone.body.errCode).toBe('UserNotFound');
      await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: member.email, password: PASSWORD }).expect(401);
      const again = await del(t, store, member.id, store.owner.accessToken).expect(404);
      expect(again.body.errCode).toBe('UserNotFound');
    });

    it('lets a tenantAdmin delete a tenantUser', async () => {
      const store = await ownedStore(t);
      const admin = await addUser(t, store, { roleId: 'tenantAdmin' });
      const member = await addUser(t, store);
      await del(t, store, member.id, (await memberLogin(t, store, admin)).accessToken).expect(200);
      await get(t, store, `${V1}/${member.id}`, store.owner.accessToken).expect(404);
    });

    it('refuses deleting yourself: 403', async () => {
      const store = await ownedStore(t);
      const admin = await addUser(t, store, { roleId: 'tenantAdmin' });
      const session = await memberLogin(t, store, admin);
      const res = await del(t, store, admin.id, session.accessToken).expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'Forbidden' });
      await get(t, store, CURRENT, session.accessToken).expect(200);
      await del(t, store, store.ownerId, store.owner.accessToken).expect(403);
    });

    it('refuses deleting the store owner, even for the super admin: 403', async () => {
      const store = await ownedStore(t);
      const admin = await addUser(t, store, { roleId: 'tenantAdmin' });
      const byAdmin = await del(t, store, store.ownerId, (await memberLogin(t, store, admin)).accessToken).expect(403);
      expect(byAdmin.body.errCode).toBe('Forbidden');
      await del(t, store, store.ownerId, superAdmin.accessToken).expect(403);
      await get(t, store, CURRENT, store.owner.accessToken).expect(200);
    });

    it('refuses a tenantUser: 403, and the target stays', async () => {
      const store = await ownedStore(t);
      const [me, other] = [await addUser(t, store), await addUser(t, store)];
      const session = await memberLogin(t, store, me);
      const res = await del(t, store, other.id, session.accessToken).expect(403);
      expect(res.body.errCode).toBe('Forbidden');
      await get(t, store, `${V1}/${other.id}`, store.owner.accessToken).expect(200);
    });

    it('answers 404 for a user of another store, which stays', async () => {
      const [store, other] = [await ownedStore(t), await ownedStore(t)];
      const foreign = await addUser(t, other);
      await del(t, store, foreign.id, store.owner.accessToken).expect(404);
      await get(t, other, `${V1}/${foreign.id}`, other.owner.accessToken).expect(200);
    });
  });
});

describe('user management with a custom role', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await start({ customRoles: [{ name: 'Editor', value: 'editor' }] });
  });
  afterAll(() => t.close());

  it('lets an admin assign it', async () => {
    const store = await ownedStore(t);
    const editor = await addUser(t, store, { roleId: 'editor' });
    expect(editor.user.roleId).toBe('editor');
    expect((await memberLogin(t, store, editor)).body.roleId).toBe('editor');
    const member = await addUser(t, store);
    const res = await patch(t, store, member.id, store.owner.accessToken, { roleId: 'editor' }).expect(200);
    expect(res.body.user.roleId).toBe('editor');
  });

  it('does not make it an admin role', async () => {
    const store = await ownedStore(t);
    const editor = await addUser(t, store, { roleId: 'editor' });
    const session = await memberLogin(t, store, editor);
    await get(t, store, V1, session.accessToken).expect(403);
    await t.http
      .post(USERS)
      .set(HEADER, store.codename)
      .set('Authorization', bearer(session.accessToken))
      .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'X' })
      .expect(403);
  });
});

describe('user management with usersHaveMultipleRoles', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await start({ usersHaveMultipleRoles: true, customRoles: [{ name: 'Editor', value: 'editor' }] });
  });
  afterAll(() => t.close());

  it('stores and returns roleId as an array', async () => {
    const store = await ownedStore(t);
    const member = await addUser(t, store, { roleId: ['tenantAdmin', 'editor'] });
    expect(member.user.roleId).toEqual(['tenantAdmin', 'editor']);
    const [row] = await t.app.get(DataSource).query('SELECT "roles" FROM "users" WHERE "id" = $1', [member.id]);
    expect(row.roles).toEqual(['tenantAdmin', 'editor']);
    const read = await get(t, store, `${V1}/${member.id}`, store.owner.accessToken).expect(200);
    expect(read.body.user.roleId).toEqual(['tenantAdmin', 'editor']);
    const session = await memberLogin(t, store, member);
    expect(session.body.roleId).toEqual(['tenantAdmin', 'editor']);
    // holding tenantAdmin among its roles makes it an admin
    await get(t, store, V1, session.accessToken).expect(200);
  });

  it('returns a single default role as a one-element array', async () => {
    const store = await ownedStore(t);
    const member = await addUser(t, store);
    expect(member.user.roleId).toEqual(['tenantUser']);
  });

  it('refuses the whole array when one role is not assignable', async () => {
    const store = await ownedStore(t);
    const email = uniqueEmail();
    const res = await t.http
      .post(USERS)
      .set(HEADER, store.codename)
      .set('Authorization', bearer(store.owner.accessToken))
      .send({ email, password: PASSWORD, fullname: 'X', roleId: ['editor', 'tenantOwner'] })
      .expect(403);
    expect(res.body.errCode).toBe('RoleNotAssignable');
    expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    const empty = await t.http
      .post(USERS)
      .set(HEADER, store.codename)
      .set('Authorization', bearer(store.owner.accessToken))
      .send({ email, password: PASSWORD, fullname: 'X', roleId: [] })
      .expect(400);
    expect(empty.body.errCode).toBe('ValidationFailed');
  });
});

describe('user management with userRegisterIsPublic true', () => {
  let t: TestApp;
  let superAdmin: Login;
  beforeAll(async () => {
    t = await start({ userRegisterIsPublic: true });
    superAdmin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
  });
  afterAll(() => t.close());

  it('creates a tenantUser without a token in a store', async () => {
    const store = await ownedStore(t);
    const email = uniqueEmail();
    const res = await t.http.post(USERS).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Walk In' }).expect(201);
    expect(res.body).toMatchObject({ status: 'OK', dataName: 'user', action: 'create', userId: null, sessionId: null });
    expect(res.body.user).toMatchObject({ email, roleId: 'tenantUser', storeId: store.storeId, _owner: res.body.user.id });
    await login(t.http, email, PASSWORD, store.codename);
  });

  it('refuses roleId without a token: 403 RoleNotAssignable', async () => {
    const store = await ownedStore(t);
    const email = uniqueEmail();
    for (const roleId of ['tenantAdmin', 'tenantUser', 'tenantOwner']) {
      const res = await t.http.post(USERS).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'X', roleId }).expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'RoleNotAssignable' });
    }
    expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
  });

  it('refuses roleId from a tenantUser: 403 RoleNotAssignable', async () => {
    const store = await ownedStore(t);
    const member = await addUser(t, store);
    const session = await memberLogin(t, store, member);
    const res = await t.http
      .post(USERS)
      .set(HEADER, store.codename)
      .set('Authorization', bearer(session.accessToken))
      .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'X', roleId: 'tenantAdmin' })
      .expect(403);
    expect(res.body.errCode).toBe('RoleNotAssignable');
  });

  it('still lets the owner grant tenantAdmin, as the owner of the new user', async () => {
    const store = await ownedStore(t);
    const admin = await addUser(t, store, { roleId: 'tenantAdmin' });
    expect(admin.user).toMatchObject({ roleId: 'tenantAdmin', _owner: store.ownerId });
  });

  it("refuses an admin's token of another store: 403 TenantMismatch, and no user is created", async () => {
    const [a, b] = [await ownedStore(t), await ownedStore(t)];
    const email = uniqueEmail();
    const res = await t.http
      .post(USERS)
      .set(HEADER, b.codename)
      .set('Authorization', bearer(a.owner.accessToken))
      .send({ email, password: PASSWORD, fullname: 'Intruder', roleId: 'tenantAdmin' })
      .expect(403);
    expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'TenantMismatch' });
    expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
  });

  it('needs a token at the SaaS level: 401', async () => {
    const email = uniqueEmail();
    const res = await t.http.post(USERS).send({ email, password: PASSWORD, fullname: 'Anon' }).expect(401);
    expect(res.body).toMatchObject({ result: 'ERR', status: 401 });
    const explicit = await t.http.post(USERS).set(HEADER, 'root').send({ email, password: PASSWORD, fullname: 'Anon' }).expect(401);
    expect(explicit.body.status).toBe(401);
    expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
  });

  it("refuses a store owner's token at the SaaS level: 403 TenantMismatch", async () => {
    const store = await ownedStore(t);
    const email = uniqueEmail();
    const res = await t.http.post(USERS).set('Authorization', bearer(store.owner.accessToken)).send({ email, password: PASSWORD, fullname: 'X' }).expect(403);
    expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'TenantMismatch' });
    expect(await t.app.get(DataSource).query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
  });

  it('lets the super admin create a saasUser at root', async () => {
    const res = await t.http.post(USERS).set('Authorization', bearer(superAdmin.accessToken)).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'S' }).expect(201);
    expect(res.body.user).toMatchObject({ roleId: 'saasUser', storeId: await rootStoreId(t) });
  });
});
