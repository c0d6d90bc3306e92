import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { COUNT_PER_PERIOD_SQL } from '../src/operations/audit/audit.repository.js';
import { DAY_MS, ManualClock } from '../src/platform/clock/clock.js';
import { describeIf, expectError, login, PASSWORD, registerStore, startApp, SUPER_ADMIN, unique, uniqueEmail, waitFor, type RegisteredStore, type TestApp } from './helpers.js';

// The routes the admin console (issue 28) calls, as any client calls them: the users list's
// search, the targeted store read and changed (isActive by SaaS administrators only), every store
// for the SaaS level, and a store's overview (users, live sessions, sign-ins per hour and day from
// the audit log). Who may, what they answer, what they record, and that no store sees another's.

const HEADER = 'svc-store-codename';
const USERS = '/auth-api/v1/users';
const STORE = '/auth-api/v1/store';
const STORES = '/auth-api/v1/stores';
const OVERVIEW = '/auth-api/v1/overview';
const LOGS = '/auth-api/v1/auditlogs';
const HOUR_MS = 3_600_000;
// name and surname are separate fields (the full name is made of them), and users may have a mobile.
const SETTINGS = { userNameType: 'asNamePair' as const, secondaryIdentifierPresence: 'optional' as const };

const STORE_FIELDS = ['id', 'name', 'codename', 'fullname', 'avatar', 'isActive', 'ownerId', 'recordVersion', 'createdAt', 'updatedAt'];
const LIST_FIELDS = ['id', 'codename', 'name', 'fullname', 'avatar', 'isActive', 'createdAt', 'ownerId'];

type Entry = { action: string; storeId: string; actor: { type: string; id: string | null; roleId?: string | null }; target: { type: string; id: string | null } | null; details: Record<string, unknown> | null };
interface Owner {
  store: RegisteredStore;
  token: string;
}

describe('the console API', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let superAdmin: string;
  let saasAdmin: { id: string; token: string };
  let saasUser: string;

  const as = <R extends { set(name: string, value: string): R }>(req: R, token: string, codename?: string): R => {
    const authed = req.set('Authorization', `Bearer ${token}`);
    return codename === undefined ? authed : authed.set(HEADER, codename);
  };

  async function newStore(): Promise<Owner> {
    const store = await registerStore(t.http, { fullname: undefined, name: 'Store', surname: 'Owner', store: { name: unique('Console ') } });
    return { store, token: (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken };
  }

  async function addUser(o: Owner, body: Record<string, unknown> = {}): Promise<{ id: string; email: string; token: () => Promise<string> }> {
    const email = (body.email as string | undefined) ?? uniqueEmail();
    const res = await as(t.http.post('/auth-api/users'), o.token, o.store.codename).send({ name: 'Some', surname: 'Member', password: PASSWORD, ...body, email }).expect(201);
    return { id: res.body.user.id, email, token: async () => (await login(t.http, email, PASSWORD, o.store.codename)).accessToken };
  }

  // A user of the root store (the SaaS level), created by the super administrator.
  async function rootUser(roleId: string): Promise<{ id: string; token: string }> {
    const email = uniqueEmail();
    const res = await as(t.http.post('/auth-api/users'), superAdmin).send({ email, password: PASSWORD, name: 'Saas', surname: roleId, roleId }).expect(201);
    return { id: res.body.user.id, token: (await login(t.http, email, PASSWORD)).accessToken };
  }

  async function entries(o: Owner, action: string): Promise<Entry[]> {
    await t.app.get(AuditRecorderService).flush();
    return (await as(t.http.get(LOGS), o.token, o.store.codename).query({ pageRowCount: 100, action }).expect(200)).body.auditLogs as Entry[];
  }

  beforeAll(async () => {
    t = await startApp({ clock, settings: SETTINGS });
    superAdmin = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
    saasAdmin = await rootUser('saasAdmin');
    saasUser = (await rootUser('saasUser')).token;
  });
  afterAll(() => t?.close());

  describe('GET /v1/users?search=', () => {
    const emails = (res: { body: { users: { email: string }[] } }) => res.body.users.map((u) => u.email).sort();

    it('matches the email, mobile, full name, name or surname, in any case; `%` and `_` are plain characters', async () => {
      const o = await newStore();
      const tag = unique('q');
      const byEmail = await addUser(o, { email: `${tag}mail@example.com`, name: 'Ann', surname: 'Lee' });
      const byMobile = await addUser(o, { mobile: '+14155550123', name: 'Bob', surname: 'Ray' });
      const byName = await addUser(o, { name: `Zo${tag}`, surname: 'Kim' });
      const bySurname = await addUser(o, { name: 'Cy', surname: `Mac${tag}` });
      const byFullname = await addUser(o, { name: 'Dee', surname: 'Oddity' });
      const percent = await addUser(o, { name: 'Pct%', surname: 'Sure' });
      const search = async (text: string) => emails(await as(t.http.get(USERS), o.token, o.store.codename).query({ search: text }).expect(200));

      expect(await search(`${tag.toUpperCase()}MAIL`)).toEqual([byEmail.email]);
      expect(await search('5550123')).toEqual([byMobile.email]);
      expect(await search(`zo${tag}`)).toEqual([byName.email]);
      expect(await search(`MAC${tag}`)).toEqual([bySurname.email]);
      expect(await search('EE ODD')).toEqual([byFullname.email]); // "Dee Oddity": across the space, only the full name has it
      expect(await search('%')).toEqual([percent.email]);
      expect(await search('P_t')).toEqual([]); // `_` is no wildcard
      expect(await search(tag).then((found) => found.length)).toBe(3); // email, name and surname
      expect(await search('no such text anywhere')).toEqual([]);
      // the whole store without search, the owner included
      const all = await as(t.http.get(USERS), o.token, o.store.codename).expect(200);
      expect(all.body.paging.totalRowCount).toBe(7);
    });

    it('pages the matches oldest first, with the usual envelope', async () => {
      const o = await newStore();
      const word = unique('Page');
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await addUser(o, { name: `N${i}`, surname: word }));
      await addUser(o, { name: 'Not', surname: 'Matching' });
      const page = (n: number) => as(t.http.get(USERS), o.token, o.store.codename).query({ search: word, pageRowCount: 2, pageNumber: n }).expect(200);
      const first = await page(1);
      expect(first.body).toMatchObject({ status: 'OK', dataName: 'users', action: 'list', rowCount: 2, paging: { pageNumber: 1, pageRowCount: 2, totalRowCount: 3, pageCount: 2 } });
      expect(first.body.uiPermissions).toEqual(expect.any(Array));
      expect(first.body.users.map((u: { id: string }) => u.id)).toEqual([made[0].id, made[1].id]);
      const second = await page(2);
      expect(second.body.paging).toMatchObject({ pageNumber: 2, totalRowCount: 3 });
      expect(second.body.users.map((u: { id: string }) => u.id)).toEqual([made[2].id]);
    });

    it('finds nothing of another store, and refuses an empty or too long search', async () => {
      const [a, b] = [await newStore(), await newStore()];
      const word = unique('Shared');
      const mine = await addUser(a, { name: 'Mine', surname: word });
      await addUser(b, { name: 'Theirs', surname: word });
      const found = await as(t.http.get(USERS), a.token, a.store.codename).query({ search: word }).expect(200);
      expect(found.body.users.map((u: { id: string }) => u.id)).toEqual([mine.id]);
      expect(found.body.paging.totalRowCount).toBe(1);
      const other = await as(t.http.get(USERS), b.token, b.store.codename).query({ search: a.store.ownerEmail }).expect(200);
      expect(other.body.users).toEqual([]);
      expectError(await as(t.http.get(USERS), a.token, a.store.codename).query({ search: '' }), 400, 'ValidationFailed');
      expectError(await as(t.http.get(USERS), a.token, a.store.codename).query({ search: 'x'.repeat(101) }), 400, 'ValidationFailed');
      await as(t.http.get(USERS), a.token, a.store.codename).query({ search: 'x'.repeat(100) }).expect(200);
      // the same policy as the list without search
      const member = await addUser(a);
      expectError(await as(t.http.get(USERS), await member.token(), a.store.codename).query({ search: word }), 403, 'Forbidden');
      expectError(await as(t.http.get(USERS), b.token, a.store.codename).query({ search: word }), 403, 'TenantMismatch');
    });
  });

  describe('GET /v1/store', () => {
    it("answers the targeted store's record to its administrators, and to SaaS administrators for any store", async () => {
      const o = await newStore();
      const res = await as(t.http.get(STORE), o.token, o.store.codename).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', dataName: 'store', action: 'get', rowCount: 1 });
      expect(Object.keys(res.body.store).sort()).toEqual([...STORE_FIELDS].sort());
      expect(res.body.store).toMatchObject({ id: o.store.storeId, codename: o.store.codename, isActive: true, ownerId: o.store.ownerId });
      const admin = await addUser(o, { roleId: 'tenantAdmin' });
      await as(t.http.get(STORE), await admin.token(), o.store.codename).expect(200);
      for (const token of [saasAdmin.token, superAdmin]) {
        expect((await as(t.http.get(STORE), token, o.store.codename).expect(200)).body.store.id).toBe(o.store.storeId);
      }
      // the root store, to its SaaS administrators
      expect((await as(t.http.get(STORE), saasAdmin.token).expect(200)).body.store.codename).toBe('root');
      // an API key of an administrator
      const key = (await as(t.http.post('/auth-api/v1/apikeys'), o.token, o.store.codename).send({ name: 'console' }).expect(201)).body.apiKey.key as string;
      expect((await t.http.get(STORE).set('Authorization', `Bearer ${key}`).expect(200)).body.store.id).toBe(o.store.storeId);
    });

    it('refuses a plain user, another store\'s administrator and a saasUser', async () => {
      const [o, other] = [await newStore(), await newStore()];
      const member = await addUser(o);
      expectError(await as(t.http.get(STORE), await member.token(), o.store.codename), 403, 'Forbidden');
      expectError(await as(t.http.get(STORE), other.token, o.store.codename), 403, 'TenantMismatch');
      expectError(await as(t.http.get(STORE), saasUser, o.store.codename), 403, 'TenantMismatch');
      expectError(await as(t.http.get(STORE), saasUser), 403, 'Forbidden');
    });
  });

  describe('PATCH /v1/store', () => {
    it("changes the name, full name and avatar (the codename stays); store.updated names the fields, never their values", async () => {
      const o = await newStore();
      const changed = await as(t.http.patch(STORE), o.token, o.store.codename)
        .send({ name: '  Harbor Books  ', fullname: 'Harbor Books Ltd.', avatar: 'https://cdn.example.com/harbor.png' })
        .expect(200);
      expect(changed.body).toMatchObject({ dataName: 'store', action: 'update' });
      expect(changed.body.store).toMatchObject({ name: 'Harbor Books', fullname: 'Harbor Books Ltd.', avatar: 'https://cdn.example.com/harbor.png', codename: o.store.codename });
      expect((await as(t.http.get(STORE), o.token, o.store.codename).expect(200)).body.store).toMatchObject({ name: 'Harbor Books', fullname: 'Harbor Books Ltd.' });
      // the same values again: nothing changes, nothing is recorded
      await as(t.http.patch(STORE), o.token, o.store.codename).send({ name: 'Harbor Books', fullname: 'Harbor Books Ltd.' }).expect(200);
      // null: a generated avatar again (a second later: the log lists newest first)
      clock.advance(1000);
      const generated = await as(t.http.patch(STORE), o.token, o.store.codename).send({ avatar: null }).expect(200);
      expect(generated.body.store.avatar).toMatch(/\/auth-api\/avatars\/[a-f0-9]{32}\.svg$/);

      const updated = await entries(o, 'store.updated');
      expect(updated).toHaveLength(2);
      expect(updated[1]).toMatchObject({ actor: { type: 'user', id: o.store.ownerId, roleId: 'tenantOwner' }, target: { type: 'store', id: o.store.storeId } });
      expect((updated[1].details!.fields as string[]).sort()).toEqual(['avatar', 'fullname', 'name']);
      expect(updated[0].details).toEqual({ fields: ['avatar'] });
      expect(JSON.stringify(updated)).not.toMatch(/Harbor|cdn\.example/);
    });

    it('refuses bad values and fields it does not change', async () => {
      const o = await newStore();
      const patch = (body: object) => as(t.http.patch(STORE), o.token, o.store.codename).send(body);
      for (const body of [{ name: '' }, { name: '   ' }, { name: null }, { name: 'x'.repeat(101) }, { fullname: null }, { fullname: 'x'.repeat(201) }, { avatar: 'not a link' }, { avatar: 'ftp://example.com/a.png' }, { isActive: 'no' }]) {
        expectError(await patch(body), 400, 'ValidationFailed');
      }
      expectError(await patch({ codename: 'mine' }), 400, 'UnknownField');
      expectError(await patch({ ownerId: o.store.ownerId }), 400, 'UnknownField');
    });

    it("a SaaS administrator changes any store it targets, recorded in that store's log as its act", async () => {
      const o = await newStore();
      await as(t.http.patch(STORE), saasAdmin.token, o.store.codename).send({ fullname: 'Renamed by the SaaS' }).expect(200);
      const [entry] = await entries(o, 'store.updated');
      expect(entry).toMatchObject({ storeId: o.store.storeId, actor: { type: 'user', id: saasAdmin.id, roleId: 'saasAdmin' }, details: { fields: ['fullname'] } });
      const other = await newStore();
      expectError(await as(t.http.patch(STORE), other.token, o.store.codename).send({ name: 'Mine now' }), 403, 'TenantMismatch');
      const member = await addUser(o);
      expectError(await as(t.http.patch(STORE), await member.token(), o.store.codename).send({ name: 'Mine now' }), 403, 'Forbidden');
      expect((await as(t.http.get(STORE), o.token, o.store.codename).expect(200)).body.store.name).not.toBe('Mine now');
    });
  });

  describe('isActive', () => {
    it("is changed by SaaS administrators only, whatever the value", async () => {
      const o = await newStore();
      const admin = await addUser(o, { roleId: 'tenantAdmin' });
      const key = (await as(t.http.post('/auth-api/v1/apikeys'), o.token, o.store.codename).send({ name: 'k' }).expect(201)).body.apiKey.key as string;
      for (const isActive of [false, true]) {
        expectError(await as(t.http.patch(STORE), o.token, o.store.codename).send({ isActive }), 403, 'StoreActivationSaasOnly');
        expectError(await as(t.http.patch(STORE), await admin.token(), o.store.codename).send({ isActive }), 403, 'StoreActivationSaasOnly');
        expectError(await t.http.patch(STORE).set('Authorization', `Bearer ${key}`).send({ isActive }), 403, 'StoreActivationSaasOnly');
      }
      // refused as a whole: the name sent with it did not change either
      expectError(await as(t.http.patch(STORE), o.token, o.store.codename).send({ name: 'Sneaky', isActive: false }), 403, 'StoreActivationSaasOnly');
      expect((await as(t.http.get(STORE), o.token, o.store.codename).expect(200)).body.store).toMatchObject({ isActive: true, name: expect.not.stringMatching('Sneaky') });
    });

    it('deactivated by a SaaS administrator: logins, sessions and keys of the store stop with the answer; activated, they work again; each is recorded in the change\'s transaction', async () => {
      const o = await newStore();
      const key = (await as(t.http.post('/auth-api/v1/apikeys'), o.token, o.store.codename).send({ name: 'k' }).expect(201)).body.apiKey.key as string;
      const works = () => Promise.all([as(t.http.get(USERS), o.token, o.store.codename).expect(200), t.http.get(USERS).set('Authorization', `Bearer ${key}`).expect(200)]);
      await works(); // the store, the session and the key are cached now

      const off = await as(t.http.patch(STORE), saasAdmin.token, o.store.codename).send({ isActive: false, name: 'Closed store' }).expect(200);
      expect(off.body.store).toMatchObject({ isActive: false, name: 'Closed store' });
      // written with the change, before any flush of the queue
      const rows: { action: string; actorId: string; details: unknown }[] = await t.app
        .get(DataSource)
        .query(`SELECT "action", "actorId", "details" FROM "audit_log" WHERE "storeId" = $1 AND "action" IN ('store.updated', 'store.deactivated') ORDER BY "seq"`, [o.store.storeId]);
      expect(rows).toEqual([
        { action: 'store.updated', actorId: saasAdmin.id, details: { fields: ['name'] } },
        { action: 'store.deactivated', actorId: saasAdmin.id, details: null },
      ]);
      // this replica forgot the row with the answer: no wait
      expectError(await as(t.http.get(USERS), o.token, o.store.codename), 403, 'StoreInactive');
      expectError(await t.http.get(USERS).set('Authorization', `Bearer ${key}`), 403, 'StoreInactive');
      expectError(await t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: o.store.ownerEmail, password: PASSWORD }), 403, 'StoreInactive');
      // the SaaS administrator still reads and lists it
      expect((await as(t.http.get(STORE), saasAdmin.token, o.store.codename).expect(200)).body.store.isActive).toBe(false);

      // deactivating again changes and records nothing
      await as(t.http.patch(STORE), superAdmin, o.store.codename).send({ isActive: false }).expect(200);
      await as(t.http.patch(STORE), superAdmin, o.store.codename).send({ isActive: true }).expect(200);
      await works();
      const actions: { action: string }[] = await t.app.get(DataSource).query(`SELECT "action" FROM "audit_log" WHERE "storeId" = $1 AND "action" LIKE 'store.%' ORDER BY "seq"`, [o.store.storeId]);
      expect(actions.map((a) => a.action)).toEqual(['store.created', 'store.updated', 'store.deactivated', 'store.activated']);
    });

    it('the root store is never deactivated', async () => {
      for (const token of [superAdmin, saasAdmin.token]) {
        expectError(await as(t.http.patch(STORE), token).send({ isActive: false }), 403, 'RootStoreAlwaysActive');
        expectError(await as(t.http.patch(STORE), token, 'root').send({ isActive: false }), 403, 'RootStoreAlwaysActive');
      }
      expect((await as(t.http.patch(STORE), superAdmin).send({ isActive: true }).expect(200)).body.store).toMatchObject({ codename: 'root', isActive: true });
      await as(t.http.get(USERS), saasAdmin.token).expect(200);
    });
  });

  describe('GET /v1/stores', () => {
    it('lists every store to SaaS administrators, root and inactive ones included, oldest first', async () => {
      const o = await newStore();
      await as(t.http.patch(STORE), saasAdmin.token, o.store.codename).send({ isActive: false }).expect(200);
      const first = await as(t.http.get(STORES), saasAdmin.token).query({ pageRowCount: 100 }).expect(200);
      expect(first.body).toMatchObject({ status: 'OK', dataName: 'stores', action: 'list', paging: { pageNumber: 1, pageRowCount: 100 } });
      const stores = first.body.stores as Record<string, unknown>[];
      // the seed's two stores first (root and sample, made in one transaction: the same instant)
      expect(stores.slice(0, 2).map((s) => s.codename).sort()).toEqual(['root', 'sample']);
      expect(stores.find((s) => s.codename === 'root')).toMatchObject({ ownerId: null, isActive: true });
      for (const s of stores) expect(Object.keys(s).sort()).toEqual([...LIST_FIELDS].sort());
      const created = stores.map((s) => Date.parse(s.createdAt as string));
      expect(created).toEqual([...created].sort((x, y) => x - y));
      // the last page holds the newest, the deactivated one among them
      const total = first.body.paging.totalRowCount as number;
      // (other suites may add stores meanwhile)
      const last = await as(t.http.get(STORES), superAdmin).query({ pageRowCount: 1, pageNumber: total }).expect(200);
      expect(last.body.paging).toMatchObject({ pageNumber: total, pageRowCount: 1 });
      expect(last.body.paging.totalRowCount).toBeGreaterThanOrEqual(total);
      expect(last.body.paging.pageCount).toBe(last.body.paging.totalRowCount);
      expect(last.body.stores).toHaveLength(1);
      const found = await as(t.http.get(STORES), superAdmin).query({ search: o.store.codename }).expect(200);
      expect(found.body.stores).toEqual([{ id: o.store.storeId, codename: o.store.codename, name: expect.any(String), fullname: expect.any(String), avatar: expect.any(String), isActive: false, createdAt: expect.any(String), ownerId: o.store.ownerId }]);
    });

    it('searches the codename, name and full name in any case, with paging', async () => {
      const tag = unique('s');
      const made: Owner[] = [];
      for (let i = 0; i < 3; i++) made.push(await newStore());
      // the codename (from the registered name), the name, the full name
      await as(t.http.patch(STORE), made[1].token, made[1].store.codename).send({ name: `Named ${tag.toUpperCase()}` }).expect(200);
      await as(t.http.patch(STORE), made[2].token, made[2].store.codename).send({ fullname: `Full ${tag} Ltd.` }).expect(200);
      const byCode = await registerStore(t.http, { fullname: undefined, name: 'Store', surname: 'Owner', store: { name: `Code ${tag}` } });
      const byCodeOwner = (await login(t.http, byCode.ownerEmail, PASSWORD, byCode.codename)).accessToken;
      await as(t.http.patch(STORE), byCodeOwner, byCode.codename).send({ name: 'Plain', fullname: 'Plain Ltd.' }).expect(200); // the codename alone has the tag
      const search = (text: string, query: object = {}) => as(t.http.get(STORES), saasAdmin.token).query({ search: text, ...query }).expect(200);
      const all = await search(tag);
      expect(all.body.stores.map((s: { id: string }) => s.id)).toEqual([made[1].store.storeId, made[2].store.storeId, byCode.storeId]);
      const page2 = await search(tag.toUpperCase(), { pageRowCount: 2, pageNumber: 2 });
      expect(page2.body.paging).toMatchObject({ pageNumber: 2, pageRowCount: 2, totalRowCount: 3, pageCount: 2 });
      expect(page2.body.stores.map((s: { id: string }) => s.id)).toEqual([byCode.storeId]);
      // "Full <tag> Ltd.": `%` and `_` as wildcards would match it
      expect((await search(`${tag}%Ltd`)).body.stores).toEqual([]);
      expect((await search(`${tag}_Ltd`)).body.stores).toEqual([]);
      expect((await search(`${tag} Ltd`)).body.stores.map((s: { id: string }) => s.id)).toEqual([made[2].store.storeId]);
      expectError(await as(t.http.get(STORES), saasAdmin.token).query({ search: '' }), 400, 'ValidationFailed');
    });

    it('refuses everyone but the SaaS administrators', async () => {
      const o = await newStore();
      expectError(await as(t.http.get(STORES), saasUser), 403, 'Forbidden');
      expectError(await as(t.http.get(STORES), o.token, o.store.codename), 403, 'Forbidden');
      expectError(await as(t.http.get(STORES), o.token), 403, 'TenantMismatch');
      const key = (await as(t.http.post('/auth-api/v1/apikeys'), o.token, o.store.codename).send({ name: 'k' }).expect(201)).body.apiKey.key as string;
      expectError(await t.http.get(STORES).set('Authorization', `Bearer ${key}`), 403, 'Forbidden');
    });
  });

  describe('GET /v1/overview', () => {
    const overview = (token: string, codename?: string) => as(t.http.get(OVERVIEW), token, codename).expect(200).then((res) => res.body);
    const failLogin = (codename: string, username: string) => t.http.post('/auth-api/login').set(HEADER, codename).send({ username, password: 'wrong password!' }).expect(401);

    it("is the targeted store's administrators' and SaaS administrators'", async () => {
      const [o, other] = [await newStore(), await newStore()];
      const admin = await addUser(o, { roleId: 'tenantAdmin' });
      const member = await addUser(o);
      expect((await overview(await admin.token(), o.store.codename)).users).toBe(3);
      expectError(await as(t.http.get(OVERVIEW), await member.token(), o.store.codename), 403, 'Forbidden');
      expectError(await as(t.http.get(OVERVIEW), other.token, o.store.codename), 403, 'TenantMismatch');
      expectError(await as(t.http.get(OVERVIEW), saasUser, o.store.codename), 403, 'TenantMismatch');
      const key = (await as(t.http.post('/auth-api/v1/apikeys'), o.token, o.store.codename).send({ name: 'k' }).expect(201)).body.apiKey.key as string;
      expect((await t.http.get(OVERVIEW).set('Authorization', `Bearer ${key}`).expect(200)).body.users).toBe(3);
      // the root store's, to its SaaS administrators
      expect((await overview(saasAdmin.token)).users).toBeGreaterThanOrEqual(3);
    });

    it("counts the sign-ins from a range of the (storeId, action, at) index, grouped by the database", async () => {
      // A log like a busy deployment's (20,000 entries of 10 actions over 20 stores and 10 days),
      // analysed, in a transaction rolled back: the plan of the service's own statement.
      const runner = t.app.get(DataSource).createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      try {
        await runner.query(`
          INSERT INTO audit_log (id, "storeId", seq, at, action, outcome, "actorType", hash)
          SELECT gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad((i % 20)::text, 12, '0'))::uuid, 1000000 + i,
                 now() - (i % 240) * interval '1 hour',
                 (ARRAY['user.login.succeeded','user.login.failed','user.logout','user.updated','apikey.created','session.ended','user.created','group.changed','store.updated','user.2fa.passed'])[(i / 20) % 10 + 1],
                 'success', 'user', md5(i::text) || md5((i + 1)::text)
          FROM generate_series(1, 20000) AS i`);
        await runner.query('ANALYZE audit_log');
        const store = '00000000-0000-4000-8000-000000000007';
        const now = Date.now();
        const [{ 'QUERY PLAN': plan }] = await runner.query(`EXPLAIN (FORMAT JSON) ${COUNT_PER_PERIOD_SQL}`, [store, ['user.login.succeeded', 'user.login.failed'], new Date(now - 7 * DAY_MS), new Date(now), 'day']);
        const text = JSON.stringify(plan);
        expect(text).toContain('"Index Name":"audit_log_store_action_prefix_idx"');
        expect(text).not.toContain('Seq Scan');
        const counted: { count: number }[] = await runner.query(COUNT_PER_PERIOD_SQL, [store, ['user.login.succeeded', 'user.login.failed'], new Date(now - 7 * DAY_MS), new Date(now + 1000), 'day']);
        expect(counted.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(0);
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    });

    // Last: the clock moves a month on, past every login of this file.
    it("counts the store's users, live sessions, and sign-ins per hour (24 h) and day (7 d) from its audit log, nothing of other stores", async () => {
      // 10:30 UTC of a day to come: the periods below fall where this test says
      const now = clock.now().getTime();
      clock.advance(((now % DAY_MS) < 10.5 * HOUR_MS ? 0 : DAY_MS) + 10.5 * HOUR_MS - (now % DAY_MS));
      const [o, other] = [await newStore(), await newStore()]; // each owner signed in once (2 days ago, below)
      const member = await addUser(o);
      const signIn = () => login(t.http, member.email, PASSWORD, o.store.codename);
      const otherStoreBurst = async () => {
        await login(t.http, other.store.ownerEmail, PASSWORD, other.store.codename);
        await failLogin(other.store.codename, other.store.ownerEmail);
      };

      // two days ago, 10:30: 2 sign-ins (the owner's, the member's), 1 refused
      await signIn();
      await failLogin(o.store.codename, member.email);
      await otherStoreBurst();
      // today, 10:30: 1 sign-in, 3 refused (one of an unknown user)
      clock.advance(2 * DAY_MS);
      const ending = await signIn();
      await failLogin(o.store.codename, member.email);
      await failLogin(o.store.codename, member.email);
      await failLogin(o.store.codename, 'nobody@example.com');
      await otherStoreBurst();
      // today, 11:30: 1 sign-in (the owner's, who then asks), 1 refused
      clock.advance(HOUR_MS);
      await failLogin(o.store.codename, member.email);
      const owner = (await login(t.http, o.store.ownerEmail, PASSWORD, o.store.codename)).accessToken;
      await t.http.post('/auth-api/logout').set(HEADER, o.store.codename).set('Authorization', `Bearer ${ending.accessToken}`).expect(200);
      await t.app.get(AuditRecorderService).flush();

      const body = await overview(owner, o.store.codename);
      expect(Object.keys(body).sort()).toEqual(['activeSessions', 'signIns', 'status', 'users']);
      expect(body).toMatchObject({ status: 'OK', users: 2, activeSessions: 3 }); // 4 sign-ins, 1 logged out
      const today = Math.floor(clock.now().getTime() / DAY_MS) * DAY_MS;
      const hour = Math.floor(clock.now().getTime() / HOUR_MS) * HOUR_MS;
      const { last24h, last7d } = body.signIns as { last24h: { from: string; succeeded: number; failed: number }[]; last7d: { from: string; succeeded: number; failed: number }[] };
      expect(last24h.map((b) => b.from)).toEqual(Array.from({ length: 24 }, (_, i) => new Date(hour - (23 - i) * HOUR_MS).toISOString()));
      expect(last7d.map((b) => b.from)).toEqual(Array.from({ length: 7 }, (_, i) => new Date(today - (6 - i) * DAY_MS).toISOString()));
      const counts = (list: { succeeded: number; failed: number }[]) => list.map((b) => [b.succeeded, b.failed]);
      expect(counts(last24h)).toEqual([...Array.from({ length: 22 }, () => [0, 0]), [1, 3], [1, 1]]);
      expect(counts(last7d)).toEqual([[0, 0], [0, 0], [0, 0], [0, 0], [2, 1], [0, 0], [2, 4]]);

      // the other store's own, as its SaaS administrator sees it: 2 sign-ins and 1 refused on each day
      const theirs = await overview(saasAdmin.token, other.store.codename);
      expect(theirs).toMatchObject({ users: 1, activeSessions: 3 });
      expect(counts(theirs.signIns.last7d)).toEqual([[0, 0], [0, 0], [0, 0], [0, 0], [2, 1], [0, 0], [1, 1]]);
      expect((await overview(superAdmin, o.store.codename)).signIns).toEqual(body.signIns);

      // a month on: every session of the store expired (tokenPeriodInDays 30), no sign-in in the periods
      clock.advance(31 * DAY_MS);
      const later = await overview((await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken, o.store.codename);
      expect(later).toMatchObject({ users: 2, activeSessions: 0 });
      expect([...counts(later.signIns.last24h), ...counts(later.signIns.last7d)].flat().every((n) => n === 0)).toBe(true);
    });
  });
});

// With `pbacIsActive` the routes' permissions decide: the store's administrators hold the new ones
// but `stores.list`, which only the SaaS level's administrators hold; a grant may give it to another
// role of the root store, never open the list to a store's users.
describe('the console API with PBAC', () => {
  let t: TestApp;
  let superAdmin: string;
  beforeAll(async () => {
    t = await startApp({ settings: { pbacIsActive: true } });
    superAdmin = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
  });
  afterAll(() => t?.close());

  const as = <R extends { set(name: string, value: string): R }>(req: R, token: string, codename?: string): R => {
    const authed = req.set('Authorization', `Bearer ${token}`);
    return codename === undefined ? authed : authed.set(HEADER, codename);
  };

  async function rootUser(roleId: string): Promise<string> {
    const email = uniqueEmail();
    await as(t.http.post('/auth-api/users'), superAdmin).send({ email, password: PASSWORD, fullname: roleId, roleId }).expect(201);
    return (await login(t.http, email, PASSWORD)).accessToken;
  }

  it('store admins hold store.read, store.update and overview.read, not stores.list; SaaS admins hold stores.list', async () => {
    const store = await registerStore(t.http);
    const owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    const held = (await as(t.http.get(USERS), owner, store.codename).expect(200)).body.uiPermissions as string[];
    expect(held).toEqual(expect.arrayContaining(['store.read', 'store.update', 'overview.read']));
    expect(held).not.toContain('stores.list');
    await as(t.http.get(STORE), owner, store.codename).expect(200);
    await as(t.http.get(OVERVIEW), owner, store.codename).expect(200);
    expectError(await as(t.http.get(STORES), owner, store.codename), 403, 'PermissionDenied');
    const saasAdmin = await rootUser('saasAdmin');
    expect((await as(t.http.get(USERS), saasAdmin).expect(200)).body.uiPermissions).toContain('stores.list');
    await as(t.http.get(STORES), saasAdmin).expect(200);
  });

  it('a grant of stores.list opens the list to another role of the root store, never to a store\'s users', async () => {
    const saasUser = await rootUser('saasUser');
    expectError(await as(t.http.get(STORES), saasUser), 403, 'PermissionDenied');
    const grant = await as(t.http.post('/auth-api/v1/permissiongrants'), superAdmin).send({ roleId: 'saasUser', permission: 'stores.list', canDo: true }).expect(201);
    try {
      await as(t.http.get(STORES), saasUser).expect(200);
    } finally {
      // a SaaS-level grant reaches every store of the run's shared database: gone again
      await as(t.http.delete(`/auth-api/v1/permissiongrants/${grant.body.permissionGrant.id}`), superAdmin).expect(200);
    }

    const store = await registerStore(t.http);
    await as(t.http.post('/auth-api/v1/permissiongrants'), superAdmin, store.codename).send({ roleId: 'tenantOwner', permission: 'stores.list', canDo: true }).expect(201);
    const owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    expect((await as(t.http.get(USERS), owner, store.codename).expect(200)).body.uiPermissions).toContain('stores.list');
    expectError(await as(t.http.get(STORES), owner, store.codename), 403, 'StoreListSaasOnly');
  });

  it('a deny of overview.read closes the overview to that role', async () => {
    const store = await registerStore(t.http);
    const owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    const email = uniqueEmail();
    await as(t.http.post('/auth-api/users'), owner, store.codename).send({ email, password: PASSWORD, fullname: 'Admin', roleId: 'tenantAdmin' }).expect(201);
    const admin = (await login(t.http, email, PASSWORD, store.codename)).accessToken;
    await as(t.http.get(OVERVIEW), admin, store.codename).expect(200);
    await as(t.http.post('/auth-api/v1/permissiongrants'), owner, store.codename).send({ roleId: 'tenantAdmin', permission: 'overview.read', canDo: false }).expect(201);
    expectError(await as(t.http.get(OVERVIEW), admin, store.codename), 403, 'PermissionDenied');
    await as(t.http.get(OVERVIEW), owner, store.codename).expect(200);
  });
});

// Two replicas on one PostgreSQL: the one that did not make the change hears it from the database
// (the embedded database delivers a notification only to the connection that caused it, so its
// replicas in one test run do not hear each other; a deployment runs one replica on it).
const describeOnPostgres = describeIf(process.env.DATABASE_URL, 'needs DATABASE_URL: replicas hear store changes through PostgreSQL');

describeOnPostgres('the console API on two replicas', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await Promise.all([startApp(), startApp()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it("a store deactivated on A stops on B as soon as the database announces it, and works again once activated", async () => {
    const superAdmin = (await login(a.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
    const store = await registerStore(a.http);
    const owner = (await login(a.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    const onB = async () => (await b.http.get(USERS).set(HEADER, store.codename).set('Authorization', `Bearer ${owner}`)).status;
    expect(await onB()).toBe(200); // the store is in B's cache now
    await a.http.patch(STORE).set(HEADER, store.codename).set('Authorization', `Bearer ${superAdmin}`).send({ isActive: false }).expect(200);
    await waitFor('the deactivation on replica B', async () => ((await onB()) === 403 ? true : undefined), 1_000);
    await a.http.patch(STORE).set(HEADER, store.codename).set('Authorization', `Bearer ${superAdmin}`).send({ isActive: true }).expect(200);
    await waitFor('the activation on replica B', async () => ((await onB()) === 200 ? true : undefined), 1_000);
  });
});
