import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import bcrypt from 'bcrypt';
import { DataSource } from 'typeorm';
import type { SettingsOverrides } from '../src/settings.js';
import { UserRepository } from '../src/identity/user/user.repository.js';
import { DomainEvents } from '../src/kernel/domain-events.js';
import { PASSWORD, registerStore, startApp, unique, uniqueEmail, type TestApp, updateStoreRow } from './helpers.js';

const OWNER = '/auth-api/v1/registerstoreowner';
const USER = '/auth-api/v1/registerstoreuser';
const HEADER = 'svc-store-codename';

// Custom user properties are declared on the input class at boot: every app of this file uses
// the same list.
const CUSTOM_USER_PROPERTIES: SettingsOverrides['customUserProperties'] = [
  { name: 'nickname', type: 'string', required: false, maxLength: 20 },
  { name: 'age', type: 'number', required: false, maxLength: 255 },
];

function start(settings: SettingsOverrides = {}): Promise<TestApp> {
  return startApp({ settings: { customUserProperties: CUSTOM_USER_PROPERTIES, ...settings } });
}

// Absolute, from the request's address (PUBLIC_URL unset in these tests).
const GENERATED_AVATAR = /^http:\/\/127\.0\.0\.1:\d+\/auth-api\/avatars\/[0-9a-f]{32}\.svg$/;

describe('registration (default settings)', () => {
  let t: TestApp;
  let ds: DataSource;
  beforeAll(async () => {
    t = await start();
    ds = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  async function storeRows(name: string): Promise<{ id: string; codename: string }[]> {
    return ds.query('SELECT "id", "codename" FROM "stores" WHERE "name" = $1', [name]);
  }

  describe('POST /v1/registerstoreowner', () => {
    it('creates the store and its owner and answers the user envelope with the store beside it', async () => {
      const name = unique('Blue Harbor ');
      const local = unique('ada.');
      const res = await t.http
        .post(OWNER)
        .send({ email: `  ${local.toUpperCase()}@Example.COM `, password: PASSWORD, fullname: 'Ada Lovelace', store: { name } })
        .expect(201);

      expect(res.body).toMatchObject({
        status: 'OK',
        statusCode: '201',
        dataName: 'user',
        action: 'create',
        method: 'POST',
        rowCount: 1,
        source: 'db',
        ssoTime: 0,
        userId: null,
        sessionId: null,
      });
      expect(typeof res.body.elapsedMs).toBe('number');
      expect(res.body.cacheKey).toMatch(/^[0-9a-f]+$/);
      expect(typeof res.body.requestId).toBe('string');
      expect(typeof res.body.appVersion).toBe('string');

      const { user, store } = res.body;
      expect(Object.keys(user).sort()).toEqual(
        ['_owner', 'avatar', 'createdAt', 'email', 'emailVerified', 'fullname', 'id', 'isActive', 'recordVersion', 'roleId', 'storeId', 'updatedAt'].sort(),
      );
      expect(user).toMatchObject({
        email: `${local}@example.com`,
        emailVerified: false,
        fullname: 'Ada Lovelace',
        roleId: 'tenantOwner',
        isActive: true,
        recordVersion: 1,
        storeId: store.id,
        _owner: user.id,
      });
      expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number.isNaN(Date.parse(user.createdAt))).toBe(false);
      expect(Number.isNaN(Date.parse(user.updatedAt))).toBe(false);

      expect(store).toMatchObject({
        name,
        codename: name.toLowerCase().replace(/ /g, '-'),
        fullname: name,
        isActive: true,
        ownerId: user.id,
      });
      expect(store.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(store.avatar).toMatch(GENERATED_AVATAR);

      const [row] = await ds.query('SELECT "email", "storeId", "roles" FROM "users" WHERE "id" = $1', [user.id]);
      expect(row).toEqual({ email: `${local}@example.com`, storeId: store.id, roles: ['tenantOwner'] });
      const stored = await storeRows(name);
      expect(stored).toEqual([{ id: store.id, codename: store.codename }]);
    });

    it('keeps a given store fullname and avatar', async () => {
      const name = unique('Shop ');
      const res = await t.http
        .post(OWNER)
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Owner', store: { name, fullname: 'Shop Ltd.', avatar: 'https://cdn.example.com/shop.png' } })
        .expect(201);
      expect(res.body.store).toMatchObject({ name, fullname: 'Shop Ltd.', avatar: 'https://cdn.example.com/shop.png' });
    });

    it('gives stores of the same name distinct codenames: x, then x-2, then x-3', async () => {
      const name = unique('Twin Store ');
      const base = name.toLowerCase().replace(/ /g, '-');
      const codenames: string[] = [];
      for (let i = 0; i < 3; i++) {
        const mine = await registerStore(t.http, { store: { name } });
        codenames.push(mine.codename);
      }
      expect(codenames).toEqual([base, `${base}-2`, `${base}-3`]);
      // each resolves to its own store
      const u = await t.http.post(USER).set(HEADER, `${base}-2`).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'U' }).expect(201);
      const [row] = await ds.query('SELECT "codename" FROM "stores" WHERE "id" = $1', [u.body.user.storeId]);
      expect(row.codename).toBe(`${base}-2`);
    });

    it('folds accents and runs of punctuation into a lower-case, url-safe codename', async () => {
      const suffix = unique();
      const { codename } = await registerStore(t.http, { store: { name: `Café  Zürich!! ${suffix}` } });
      expect(codename).toBe(`cafe-zurich-${suffix}`);
      expect(codename).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    });

    it('is refused while targeting a store: 403 RootLevelOnly, and no store is created', async () => {
      const target = await registerStore(t.http);
      const name = unique('Nested ');
      const res = await t.http
        .post(OWNER)
        .set(HEADER, target.codename)
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Owner', store: { name } })
        .expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'RootLevelOnly' });
      expect(typeof res.body.requestId).toBe('string');
      expect(await storeRows(name)).toEqual([]);
    });

    it('accepts an explicit root target', async () => {
      const res = await t.http
        .post(OWNER)
        .set(HEADER, 'root')
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Owner', store: { name: unique('Rooted ') } })
        .expect(201);
      expect(res.body.user.roleId).toBe('tenantOwner');
    });

    it('requires the store object and its name', async () => {
      const noStore = await t.http.post(OWNER).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Owner' }).expect(400);
      expect(noStore.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
      expect(noStore.body.detail).toMatch(/store/);
      const noName = await t.http.post(OWNER).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Owner', store: {} }).expect(400);
      expect(noName.body.errCode).toBe('ValidationFailed');
      expect(noName.body.detail).toMatch(/store\.name/);
    });

    it('leaves no store behind when the registration is refused', async () => {
      const name = unique('Refused ');
      const res = await t.http.post(OWNER).send({ email: uniqueEmail(), password: 'short', fullname: 'Owner', store: { name } }).expect(400);
      expect(res.body.errCode).toBe('WeakPassword');
      expect(await storeRows(name)).toEqual([]);
    });

    it('rolls the store back when the user insert fails inside the transaction', async () => {
      // Fault injected after the owner row has been written in the transaction: both the store
      // and the user must disappear, and no event may announce them.
      const repo = t.app.get(UserRepository);
      const original = repo.insert;
      const email = uniqueEmail();
      const name = unique('Doomed ');
      const events: string[] = [];
      const domainEvents = t.app.get(DomainEvents);
      const stops = [domainEvents.listen('store.created', () => events.push('store.created')), domainEvents.listen('user.created', () => events.push('user.created'))];
      repo.insert = async function (this: UserRepository, ...args: Parameters<UserRepository['insert']>) {
        const inserted = await original.apply(this, args);
        if (inserted.email === email) throw new Error('injected failure after the user insert');
        return inserted;
      };
      try {
        const res = await t.http.post(OWNER).send({ email, password: PASSWORD, fullname: 'Owner', store: { name } }).expect(500);
        expect(res.body).toMatchObject({ result: 'ERR', status: 500, errCode: 'InternalError' });
        expect(res.text).not.toMatch(/injected/);
      } finally {
        repo.insert = original;
        for (const stop of stops) stop();
      }
      expect(await storeRows(name)).toEqual([]);
      expect(await ds.query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
      expect(events).toEqual([]);
      // the same registration succeeds afterwards, with the codename the failed one would have had
      const ok = await t.http.post(OWNER).send({ email, password: PASSWORD, fullname: 'Owner', store: { name } }).expect(201);
      expect(ok.body.store.codename).toBe(name.toLowerCase().replace(/ /g, '-'));
    });
  });

  describe('POST /v1/registerstoreuser', () => {
    it('creates a tenantUser in the targeted store', async () => {
      const store = await registerStore(t.http);
      const email = uniqueEmail();
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Grace Hopper' }).expect(201);
      expect(res.body).toMatchObject({ status: 'OK', statusCode: '201', dataName: 'user', action: 'create', rowCount: 1 });
      expect(res.body.store).toBeUndefined();
      const { user } = res.body;
      expect(Object.keys(user).sort()).toEqual(
        ['_owner', 'avatar', 'createdAt', 'email', 'emailVerified', 'fullname', 'id', 'isActive', 'recordVersion', 'roleId', 'storeId', 'updatedAt'].sort(),
      );
      expect(user).toMatchObject({ email, fullname: 'Grace Hopper', roleId: 'tenantUser', storeId: store.storeId, isActive: true, emailVerified: false, _owner: user.id });
      const [row] = await ds.query('SELECT "storeId", "roles" FROM "users" WHERE "id" = $1', [user.id]);
      expect(row).toEqual({ storeId: store.storeId, roles: ['tenantUser'] });
    });

    it('is refused at the root level: 403 StoreLevelOnly', async () => {
      const email = uniqueEmail();
      const res = await t.http.post(USER).send({ email, password: PASSWORD, fullname: 'Nobody' }).expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'StoreLevelOnly' });
      const explicit = await t.http.post(USER).set(HEADER, 'root').send({ email, password: PASSWORD, fullname: 'Nobody' }).expect(403);
      expect(explicit.body.errCode).toBe('StoreLevelOnly');
      expect(await ds.query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    });

    it('refuses an unknown store codename: 400 StoreNotFound', async () => {
      const res = await t.http.post(USER).set(HEADER, unique('nostore-')).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'N' }).expect(400);
      expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'StoreNotFound' });
    });

    it('refuses an inactive store: 403 StoreInactive', async () => {
      const store = await registerStore(t.http);
      await updateStoreRow([t], store.storeId, { isActive: false });
      const email = uniqueEmail();
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Late' }).expect(403);
      expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'StoreInactive' });
      expect(await ds.query('SELECT "id" FROM "users" WHERE "email" = $1', [email])).toEqual([]);
    });

    it('targets the store through the query parameter _store', async () => {
      const store = await registerStore(t.http);
      const res = await t.http.post(USER).query({ _store: store.codename }).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Q' }).expect(201);
      expect(res.body.user.storeId).toBe(store.storeId);
    });

    it('targets the store through the body property _store, which is not an unknown field', async () => {
      const store = await registerStore(t.http);
      const res = await t.http.post(USER).send({ _store: store.codename, email: uniqueEmail(), password: PASSWORD, fullname: 'B' }).expect(201);
      expect(res.body.user.storeId).toBe(store.storeId);
      expect(res.body.user._store).toBeUndefined();
    });

    it('lets the header win over the query, and the query over the body', async () => {
      const [a, b, c] = [await registerStore(t.http), await registerStore(t.http), await registerStore(t.http)];
      const headerWins = await t.http
        .post(USER)
        .set(HEADER, a.codename)
        .query({ _store: b.codename })
        .send({ _store: c.codename, email: uniqueEmail(), password: PASSWORD, fullname: 'H' })
        .expect(201);
      expect(headerWins.body.user.storeId).toBe(a.storeId);
      const queryWins = await t.http
        .post(USER)
        .query({ _store: b.codename })
        .send({ _store: c.codename, email: uniqueEmail(), password: PASSWORD, fullname: 'Q' })
        .expect(201);
      expect(queryWins.body.user.storeId).toBe(b.storeId);
    });

    it('reads the codename case-insensitively', async () => {
      const store = await registerStore(t.http);
      const res = await t.http.post(USER).set(HEADER, store.codename.toUpperCase()).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'C' }).expect(201);
      expect(res.body.user.storeId).toBe(store.storeId);
    });
  });

  describe('identifier uniqueness', () => {
    it('refuses the same email twice in one store: 409 DuplicateIdentifier', async () => {
      const store = await registerStore(t.http);
      const email = uniqueEmail();
      await t.http.post(USER).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'First' }).expect(201);
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Second' }).expect(409);
      expect(res.body).toMatchObject({ result: 'ERR', status: 409, errCode: 'DuplicateIdentifier' });
      expect(res.body.detail).toMatch(/email/);
      const rows = await ds.query('SELECT "fullname" FROM "users" WHERE "storeId" = $1 AND "email" = $2', [store.storeId, email]);
      expect(rows).toEqual([{ fullname: 'First' }]);
    });

    it('treats emails differing only in case as the same', async () => {
      const store = await registerStore(t.http);
      const local = unique('bob.');
      await t.http.post(USER).set(HEADER, store.codename).send({ email: `${local}@x.com`, password: PASSWORD, fullname: 'bob' }).expect(201);
      const res = await t.http
        .post(USER)
        .set(HEADER, store.codename)
        .send({ email: `${local.replace('bob', 'Bob')}@X.com`, password: PASSWORD, fullname: 'Bob' })
        .expect(409);
      expect(res.body.errCode).toBe('DuplicateIdentifier');
    });

    it("refuses a store user with the owner's email in the owner's store", async () => {
      const store = await registerStore(t.http);
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: store.ownerEmail, password: PASSWORD, fullname: 'Twin' }).expect(409);
      expect(res.body.errCode).toBe('DuplicateIdentifier');
    });

    it('accepts the same email in another store (identifiers are unique per tenant)', async () => {
      const [a, b] = [await registerStore(t.http), await registerStore(t.http)];
      const email = uniqueEmail();
      const ra = await t.http.post(USER).set(HEADER, a.codename).send({ email, password: PASSWORD, fullname: 'In A' }).expect(201);
      const rb = await t.http.post(USER).set(HEADER, b.codename).send({ email, password: PASSWORD, fullname: 'In B' }).expect(201);
      expect(ra.body.user.id).not.toBe(rb.body.user.id);
      const rows: { storeId: string }[] = await ds.query('SELECT "storeId" FROM "users" WHERE "email" = $1 ORDER BY "fullname"', [email]);
      expect(rows.map((r) => r.storeId)).toEqual([a.storeId, b.storeId]);
    });
  });

  describe('avatar', () => {
    it('generates one served by the service itself when none is sent', async () => {
      const store = await registerStore(t.http);
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Face' }).expect(201);
      const avatar: string = res.body.user.avatar;
      expect(avatar).toMatch(GENERATED_AVATAR);
      const img = await t.http.get(new URL(avatar).pathname).buffer(true).parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks).toString('utf8')));
      });
      expect(img.status).toBe(200);
      expect(img.headers['content-type']).toMatch(/^image\/svg\+xml/);
      expect(img.headers['x-content-type-options']).toBe('nosniff');
      expect(img.headers['cache-control']).toMatch(/immutable/);
      expect(String(img.body)).toMatch(/^<svg[\s>]/);
      // two users get two different avatars
      const other = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Face' }).expect(201);
      expect(other.body.user.avatar).not.toBe(avatar);
    });

    it('answers 404 for an avatar that cannot exist', async () => {
      for (const path of ['/auth-api/avatars/not-an-avatar.svg', `/auth-api/avatars/${'a'.repeat(32)}.png`, `/auth-api/avatars/${'g'.repeat(32)}.svg`]) {
        const res = await t.http.get(path).expect(404);
        // an error, not an image: JSON, and not cached as the avatar would be
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.headers['cache-control'] ?? '').not.toMatch(/immutable/);
        expect(res.body).toMatchObject({ result: 'ERR', status: 404, errCode: 'NotFound' });
      }
    });

    it('stores a given http(s) avatar URL as sent', async () => {
      const store = await registerStore(t.http);
      for (const avatar of ['https://cdn.example.com/u/ada.png?size=128', 'http://img.example.org/a.jpg']) {
        const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Pic', avatar }).expect(201);
        expect(res.body.user.avatar).toBe(avatar);
        const [row] = await ds.query('SELECT "avatar" FROM "users" WHERE "id" = $1', [res.body.user.id]);
        expect(row.avatar).toBe(avatar);
      }
    });

    it('refuses an avatar that is not an http(s) URL, naming avatar', async () => {
      const store = await registerStore(t.http);
      for (const avatar of ['javascript:alert(1)', 'not a url', 'ftp://example.com/a.png', 'data:image/svg+xml,<svg/>']) {
        const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Pic', avatar }).expect(400);
        expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
        expect(res.body.detail).toMatch(/avatar/);
      }
      const name = unique('Bad Avatar ');
      const owner = await t.http
        .post(OWNER)
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'O', store: { name, avatar: 'javascript:alert(1)' } })
        .expect(400);
      expect(owner.body.detail).toMatch(/store\.avatar/);
      expect(await storeRows(name)).toEqual([]);
    });
  });

  describe('password', () => {
    async function register(password: string) {
      const store = await registerStore(t.http);
      return t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password, fullname: 'P' });
    }

    it('refuses fewer than 8 characters: 400 WeakPassword', async () => {
      const res = await register('1234567');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'WeakPassword' });
      expect(res.body.detail).toMatch(/password/);
    });

    it('refuses more than 72 bytes, counted in UTF-8: 400 WeakPassword', async () => {
      const ascii = await register('a'.repeat(73));
      expect(ascii.status).toBe(400);
      expect(ascii.body.errCode).toBe('WeakPassword');
      const accented = await register('é'.repeat(37)); // 37 characters, 74 bytes
      expect(accented.status).toBe(400);
      expect(accented.body.errCode).toBe('WeakPassword');
    });

    // Passwords strong enough for the strength rule (passwordPolicy.minScore), at the length limits.
    it('accepts the limits: 8 characters and 72 bytes', async () => {
      expect((await register('Zq7!vR2x')).status).toBe(201);
      expect((await register('correct horse battery '.repeat(4).slice(0, 72))).status).toBe(201);
    });

    it('refuses a missing or non-string password', async () => {
      const missing = await t.http.post(USER).set(HEADER, (await registerStore(t.http)).codename).send({ email: uniqueEmail(), fullname: 'P' }).expect(400);
      expect(missing.body.detail).toMatch(/password/);
      const numeric = await register(12345678 as unknown as string);
      expect(numeric.status).toBe(400);
      expect(numeric.body.detail).toMatch(/password/);
    });

    it('stores a bcrypt hash of the password, never the password', async () => {
      const password = 'Tr0ub4dor&3-horse';
      const res = await register(password);
      expect(res.status).toBe(201);
      const [row] = await ds.query('SELECT "passwordHash" FROM "users" WHERE "id" = $1', [res.body.user.id]);
      expect(row.passwordHash).toMatch(/^\$2[aby]\$/);
      expect(row.passwordHash).not.toContain(password);
      expect(await bcrypt.compare(password, row.passwordHash)).toBe(true);
      expect(await bcrypt.compare(`${password}x`, row.passwordHash)).toBe(false);
      expect(JSON.stringify(res.body)).not.toContain(password);
      expect(JSON.stringify(res.body)).not.toContain(row.passwordHash);
    });
  });

  describe('custom user properties', () => {
    it('accepts them and returns them at the top level of user; stores them in customData', async () => {
      const store = await registerStore(t.http);
      const res = await t.http
        .post(USER)
        .set(HEADER, store.codename)
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Custom', nickname: 'Ace', age: 42 })
        .expect(201);
      expect(res.body.user).toMatchObject({ nickname: 'Ace', age: 42, fullname: 'Custom', roleId: 'tenantUser' });
      expect(res.body.user.customData).toBeUndefined();
      const [row] = await ds.query('SELECT "customData" FROM "users" WHERE "id" = $1', [res.body.user.id]);
      expect(row.customData).toEqual({ nickname: 'Ace', age: 42 });
    });

    it('are optional: absent ones are neither returned nor stored', async () => {
      const store = await registerStore(t.http);
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'C', age: 7 }).expect(201);
      expect(res.body.user.age).toBe(7);
      expect('nickname' in res.body.user).toBe(false);
      const [row] = await ds.query('SELECT "customData" FROM "users" WHERE "id" = $1', [res.body.user.id]);
      expect(row.customData).toEqual({ age: 7 });
    });

    it('are accepted on owner registration too', async () => {
      const res = await t.http
        .post(OWNER)
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'O', nickname: 'Boss', store: { name: unique('Custom ') } })
        .expect(201);
      expect(res.body.user.nickname).toBe('Boss');
    });

    it('refuses a value of the wrong type, naming the property', async () => {
      const store = await registerStore(t.http);
      const age = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'C', age: '42' }).expect(400);
      expect(age.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
      expect(age.body.detail).toMatch(/age/);
      const nick = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'C', nickname: 12 }).expect(400);
      expect(nick.body.detail).toMatch(/nickname/);
    });

    it('refuses a string longer than its maxLength', async () => {
      const store = await registerStore(t.http);
      await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'C', nickname: 'n'.repeat(20) }).expect(201);
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'C', nickname: 'n'.repeat(21) }).expect(400);
      expect(res.body.errCode).toBe('ValidationFailed');
      expect(res.body.detail).toMatch(/nickname/);
    });

    it('still refuses properties that are not declared', async () => {
      const store = await registerStore(t.http);
      const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'C', shoeSize: 44 }).expect(400);
      expect(res.body).toMatchObject({ errCode: 'UnknownField' });
      expect(res.body.detail).toMatch(/shoeSize/);
    });
  });

  describe('domain events', () => {
    function record(): { events: [string, unknown][]; stop: () => void } {
      const domainEvents = t.app.get(DomainEvents);
      const events: [string, unknown][] = [];
      const stops = [domainEvents.listen('store.created', (e) => events.push(['store.created', e.payload])), domainEvents.listen('user.created', (e) => events.push(['user.created', e.payload]))];
      return {
        events,
        stop: () => {
          for (const stop of stops) stop();
        },
      };
    }

    it('owner registration emits store.created and user.created with ids only', async () => {
      const rec = record();
      try {
        const res = await t.http
          .post(OWNER)
          .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Evented', store: { name: unique('Evented ') } })
          .expect(201);
        const storeId = res.body.store.id;
        const ownerId = res.body.user.id;
        const mine = rec.events.filter(([, p]) => JSON.stringify(p).includes(storeId));
        expect(mine).toEqual([
          ['store.created', { storeId, ownerId }],
          ['user.created', { userId: ownerId, storeId }],
        ]);
        expect(Object.keys(mine[0][1] as object).sort()).toEqual(['ownerId', 'storeId']);
        expect(Object.keys(mine[1][1] as object).sort()).toEqual(['storeId', 'userId']);
      } finally {
        rec.stop();
      }
    });

    it('store-user registration emits user.created only', async () => {
      const store = await registerStore(t.http);
      const rec = record();
      try {
        const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'E' }).expect(201);
        expect(rec.events).toEqual([['user.created', { userId: res.body.user.id, storeId: store.storeId }]]);
      } finally {
        rec.stop();
      }
    });

    it('a refused registration emits nothing', async () => {
      const store = await registerStore(t.http);
      const rec = record();
      try {
        await t.http.post(USER).set(HEADER, store.codename).send({ email: store.ownerEmail, password: PASSWORD, fullname: 'Dup' }).expect(409);
        await t.http.post(OWNER).send({ email: uniqueEmail(), password: 'short', fullname: 'O', store: { name: unique('No ') } }).expect(400);
        expect(rec.events).toEqual([]);
      } finally {
        rec.stop();
      }
    });
  });
});

describe('registration with tenantRegisterIsPublic false', () => {
  let t: TestApp;
  // an app with the default settings, to create the store the closed app's users register in
  let open: TestApp;
  beforeAll(async () => {
    t = await start({ tenantRegisterIsPublic: false });
    open = await start();
  });
  afterAll(async () => {
    await t.close();
    await open.close();
  });

  it('refuses owner registration: 403 TenantRegisterNotPublic, and creates no store', async () => {
    const name = unique('Closed ');
    const res = await t.http.post(OWNER).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'O', store: { name } }).expect(403);
    expect(res.body).toMatchObject({ result: 'ERR', status: 403, errCode: 'TenantRegisterNotPublic' });
    expect(await t.app.get(DataSource).query('SELECT "id" FROM "stores" WHERE "name" = $1', [name])).toEqual([]);
  });

  it('still lets users register in an existing store', async () => {
    const store = await registerStore(open.http);
    const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'U' }).expect(201);
    expect(res.body.user).toMatchObject({ roleId: 'tenantUser', storeId: store.storeId });
  });
});

describe('registration with an optional mobile', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await start({ secondaryIdentifierPresence: 'optional' });
  });
  afterAll(() => t.close());

  it('refuses the same mobile twice in one store: 409 DuplicateIdentifier naming mobile', async () => {
    const store = await registerStore(t.http);
    await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), mobile: '+14155552671', password: PASSWORD, fullname: 'A' }).expect(201);
    const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), mobile: '+14155552671', password: PASSWORD, fullname: 'B' }).expect(409);
    expect(res.body).toMatchObject({ result: 'ERR', status: 409, errCode: 'DuplicateIdentifier' });
    expect(res.body.detail).toMatch(/mobile/);
  });

  it('accepts the same mobile in another store', async () => {
    const [a, b] = [await registerStore(t.http), await registerStore(t.http)];
    await t.http.post(USER).set(HEADER, a.codename).send({ email: uniqueEmail(), mobile: '+14155552671', password: PASSWORD, fullname: 'A' }).expect(201);
    await t.http.post(USER).set(HEADER, b.codename).send({ email: uniqueEmail(), mobile: '+14155552671', password: PASSWORD, fullname: 'B' }).expect(201);
  });

  it('leaves no store behind when the owner mobile is invalid', async () => {
    const name = unique('Bad Mobile ');
    const res = await t.http.post(OWNER).send({ email: uniqueEmail(), mobile: '+1 555', password: PASSWORD, fullname: 'O', store: { name } }).expect(400);
    expect(res.body.errCode).toBe('InvalidMobile');
    expect(await t.app.get(DataSource).query('SELECT "id" FROM "stores" WHERE "name" = $1', [name])).toEqual([]);
  });
});

describe('registration with userNameType asNamePair', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await start({ userNameType: 'asNamePair' });
  });
  afterAll(() => t.close());

  it('takes name and surname and returns them instead of fullname', async () => {
    const store = await registerStore(t.http, { fullname: undefined, name: 'Store', surname: 'Owner' });
    const res = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, name: 'Ada', surname: 'Lovelace' }).expect(201);
    expect(res.body.user).toMatchObject({ name: 'Ada', surname: 'Lovelace' });
    expect('fullname' in res.body.user).toBe(false);
  });

  it('requires both name and surname', async () => {
    const store = await registerStore(t.http, { fullname: undefined, name: 'Store', surname: 'Owner' });
    const noSurname = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, name: 'Ada' }).expect(400);
    expect(noSurname.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
    expect(noSurname.body.detail).toMatch(/surname/);
    const noName = await t.http.post(USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, surname: 'Lovelace' }).expect(400);
    expect(noName.body.detail).toMatch(/\bname\b/);
  });

  it('refuses fullname', async () => {
    const store = await registerStore(t.http, { fullname: undefined, name: 'Store', surname: 'Owner' });
    const res = await t.http
      .post(USER)
      .set(HEADER, store.codename)
      .send({ email: uniqueEmail(), password: PASSWORD, name: 'Ada', surname: 'Lovelace', fullname: 'Ada Lovelace' })
      .expect(400);
    expect(res.body).toMatchObject({ result: 'ERR', status: 400 });
    expect(res.body.detail).toMatch(/fullname/);
    const owner = await t.http
      .post(OWNER)
      .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Ada Lovelace', store: { name: unique('Pair ') } })
      .expect(400);
    expect(owner.body.detail).toMatch(/fullname/);
  });
});
