import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { DataSource } from 'typeorm';
import { PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

const OWNER = '/auth-api/v1/registerstoreowner';
const USER = '/auth-api/v1/registerstoreuser';
const BRIEF = '/auth-api/v1/briefstores';

// Every error leaves in one shape, with nothing more.
function expectError(res: Response, status: number, errCode?: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const keys = ['errCode', 'message', 'requestId', 'result', 'status'];
  expect(Object.keys(res.body).sort()).toEqual(res.body.detail === undefined ? keys : ['detail', ...keys]);
  expect(res.body).toMatchObject({ result: 'ERR', status });
  // One language: the catalogue's message code, never a sentence.
  expect(res.body.message).toMatch(/^errMsg_[A-Za-z]+$/);
  expect(typeof res.body.errCode).toBe('string');
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
  if (errCode) expect(res.body.errCode).toBe(errCode);
}

// Neither the hash nor the password a client sent ever comes back.
function expectNoSecrets(res: Response): void {
  expect(res.text).not.toContain('passwordHash');
  expect(res.text).not.toContain(PASSWORD);
}

function ownerBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { email: uniqueEmail(), password: PASSWORD, fullname: 'Bad Input', store: { name: unique('Store ') }, ...overrides };
}

function userBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { email: uniqueEmail(), password: PASSWORD, fullname: 'Bad Input', ...overrides };
}

describe('bad input on the public routes', () => {
  let t: TestApp;
  let db: DataSource;
  let store: RegisteredStore;

  const usersWithEmail = async (email: string): Promise<number> => {
    const [row] = await db.query('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [email]);
    return row.n;
  };
  const storesNamed = async (name: string): Promise<number> => {
    const [row] = await db.query('SELECT count(*)::int AS n FROM stores WHERE name = $1', [name]);
    return row.n;
  };
  const postRaw = (path: string, raw: string, headers: Record<string, string> = {}) => {
    let req = t.http.post(path).set('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return req.send(raw);
  };

  beforeAll(async () => {
    t = await startApp();
    db = t.app.get(DataSource);
    store = await registerStore(t.http);
  });
  afterAll(() => t.close());

  describe('body that is not a JSON object', () => {
    it.each([
      ['owner', OWNER],
      ['user', USER],
    ])('malformed JSON on %s registration → 400 MalformedJson', async (_, path) => {
      const res = await postRaw(path, '{"email": "a@example.com", "password": ', { 'svc-store-codename': store.codename });
      expectError(res, 400, 'MalformedJson');
    });

    it.each([
      ['an array', '[{"email":"a@example.com"}]'],
      ['a string', '"just a string"'],
      ['a number', '42'],
      ['null', 'null'],
    ])('%s as the body → 400', async (_, raw) => {
      const res = await postRaw(OWNER, raw);
      expectError(res, 400);
      expect(['MalformedJson', 'ValidationFailed']).toContain(res.body.errCode);
    });

    it('an empty JSON object names a missing required field, not a server error', async () => {
      const owner = await postRaw(OWNER, '{}');
      expectError(owner, 400, 'ValidationFailed');
      expect(owner.body.detail).toMatch(/^(store|password) /);
      const user = await postRaw(USER, '{}', { 'svc-store-codename': store.codename });
      expectError(user, 400, 'ValidationFailed');
      expect(user.body.detail).toMatch(/^password /);
    });

    it.each([
      ['text/plain', JSON.stringify({ email: 'a@example.com' })],
      ['application/x-www-form-urlencoded', 'email=a%40example.com&password=x'],
    ])('a body sent as %s → 415 UnsupportedMediaType, nothing created', async (type, raw) => {
      const res = await t.http.post(OWNER).set('Content-Type', type).send(raw);
      expectError(res, 415, 'UnsupportedMediaType');
      expect(await usersWithEmail('a@example.com')).toBe(0);
    });

    it.each([
      ['a top-level string', (name: string) => ({ fullname: `Ada\u0000${name}` }), 'fullname'],
      ['a nested string', (name: string) => ({ store: { name: `${name}\u0000` } }), 'store.name'],
    ])('a NUL character in %s → 400 naming the field, not a 500', async (_, overrides, field) => {
      const name = unique('Nul ');
      const res = await t.http.post(OWNER).send(ownerBody(overrides(name)));
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toBe(`${field} contains a NUL character`);
      expect(await storesNamed(name)).toBe(0);
    });

    it.each([
      ['registerstoreowner', OWNER, 'root', (email: string) => ownerBody({ email })],
      ['registerstoreuser', USER, 'store', (email: string) => userBody({ email })],
    ])('a lone surrogate in email on %s → 400 naming the field, not a 500', async (_, path, codename, body) => {
      for (const email of ['\ud800', `${unique('s')}\udc00@example.com`]) {
        const res = await postRaw(path, JSON.stringify(body(email)), { 'svc-store-codename': codename === 'store' ? store.codename : 'root' });
        expectError(res, 400, 'ValidationFailed');
        expect(res.body.detail).toMatch(/^email is not valid Unicode text/);
      }
    });

    it('a lone surrogate in a property name or a nested string → 400, not a 500', async () => {
      const name = unique('Sur ');
      for (const raw of [`{"\\ud800":1}`, JSON.stringify(ownerBody({ store: { name: `${name}\ud800` } }))]) {
        const res = await postRaw(OWNER, raw);
        expectError(res, 400, 'ValidationFailed');
      }
      expect(await storesNamed(`${name}\ud800`)).toBe(0);
    });

    // (HTTP itself forbids NUL in headers; the query string can carry one.)
    it('a codename that cannot exist (NUL in the query) → 400 StoreNotFound without a database error', async () => {
      const res = await t.http.get(BRIEF).query({ _store: 'a\u0000b' });
      expectError(res, 400, 'StoreNotFound');
    });

    it('an unsupported charset → 415 UnsupportedMediaType', async () => {
      const res = await t.http.post(OWNER).set('Content-Type', 'application/json; charset=ebcdic').send(JSON.stringify(ownerBody()));
      expectError(res, 415, 'UnsupportedMediaType');
    });
  });

  describe('fields the client may not send', () => {
    it('an unknown field → 400 UnknownField naming it', async () => {
      const body = ownerBody({ favouriteColour: 'blue' });
      const res = await t.http.post(OWNER).send(body);
      expectError(res, 400, 'UnknownField');
      expect(res.body.detail).toContain('favouriteColour');
      expect(await usersWithEmail(body.email as string)).toBe(0);
    });

    it('a password that is not a string beside a socialCode → 400 ValidationFailed, not a 500', async () => {
      const body = ownerBody({ socialCode: 'not-a-real-code', password: { email: [] } });
      const res = await t.http.post(OWNER).send(body);
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toMatch(/password must be a string/);
    });

    it('an unknown nested store field → 400 UnknownField naming its path', async () => {
      const body = ownerBody({ store: { name: unique('Store '), color: 'red' } });
      const res = await t.http.post(OWNER).send(body);
      expectError(res, 400, 'UnknownField');
      expect(res.body.detail).toContain('store.color');
    });

    it('an unknown field on store-user registration → 400 UnknownField', async () => {
      const body = userBody({ nickname: 'x' });
      const res = await t.http.post(USER).set('svc-store-codename', store.codename).send(body);
      expectError(res, 400, 'UnknownField');
      expect(res.body.detail).toContain('nickname');
      expect(await usersWithEmail(body.email as string)).toBe(0);
    });

    it.each([
      ['storeId', '00000000-0000-4000-8000-000000000000'],
      ['roleId', 'superAdmin'],
      ['isActive', false],
      ['emailVerified', true],
      ['recordVersion', 99],
      ['id', '00000000-0000-4000-8000-000000000001'],
    ])('system field %s on owner registration → 400, nothing created', async (field, value) => {
      const body = ownerBody({ [field]: value });
      const storeName = (body.store as { name: string }).name;
      const res = await t.http.post(OWNER).send(body);
      expectError(res, 400);
      expect(res.body.detail).toContain(field);
      expect(await usersWithEmail(body.email as string)).toBe(0);
      expect(await storesNamed(storeName)).toBe(0);
    });

    it.each([
      ['storeId', '00000000-0000-4000-8000-000000000000'],
      ['roleId', 'tenantOwner'],
      ['isActive', false],
      ['emailVerified', true],
      ['recordVersion', 99],
      ['id', '00000000-0000-4000-8000-000000000001'],
    ])('system field %s on store-user registration → 400, nothing created', async (field, value) => {
      const body = userBody({ [field]: value });
      const res = await t.http.post(USER).set('svc-store-codename', store.codename).send(body);
      expectError(res, 400);
      expect(res.body.detail).toContain(field);
      expect(await usersWithEmail(body.email as string)).toBe(0);
    });

    it('__proto__ at the top → 400 ForbiddenField, nothing created', async () => {
      const email = uniqueEmail();
      const raw = `{"__proto__":{"x":1},"email":"${email}","password":"${PASSWORD}","fullname":"Proto","store":{"name":"${unique('Store ')}"}}`;
      const res = await postRaw(OWNER, raw);
      expectError(res, 400, 'ForbiddenField');
      expect(res.body.detail).toContain('__proto__');
      expect(await usersWithEmail(email)).toBe(0);
    });

    it('__proto__ nested in store → 400 ForbiddenField', async () => {
      const raw = `{"email":"${uniqueEmail()}","password":"${PASSWORD}","fullname":"Proto","store":{"name":"x","__proto__":{"isActive":false}}}`;
      const res = await postRaw(OWNER, raw);
      expectError(res, 400, 'ForbiddenField');
      expect(res.body.detail).toContain('__proto__');
    });

    it('a nested constructor key → 400 ForbiddenField, nothing created', async () => {
      const body = ownerBody({ store: { name: unique('Store '), constructor: { prototype: { polluted: true } } } });
      const res = await t.http.post(OWNER).send(body);
      expectError(res, 400, 'ForbiddenField');
      expect(res.body.detail).toContain('constructor');
      expect(await usersWithEmail(body.email as string)).toBe(0);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('__proto__ on store-user registration → 400 ForbiddenField', async () => {
      const raw = `{"email":"${uniqueEmail()}","password":"${PASSWORD}","fullname":"Proto","__proto__":{"roleId":"tenantOwner"}}`;
      const res = await postRaw(USER, raw, { 'svc-store-codename': store.codename });
      expectError(res, 400, 'ForbiddenField');
    });
  });

  describe('wrong types', () => {
    it.each([
      ['email', { email: 5 }, /email/],
      ['password', { password: true }, /password/],
      ['store', { store: 'x' }, /store/],
      ['store.name', { store: { name: 5 } }, /store\.name/],
      ['fullname', { fullname: ['a'] }, /fullname/],
      ['store.name (object)', { store: { name: { first: 'a' } } }, /store\.name/],
    ])('%s → 400 ValidationFailed naming the field', async (_, overrides, named) => {
      const body = ownerBody(overrides);
      const res = await t.http.post(OWNER).send(body);
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toMatch(named);
      if (typeof body.email === 'string') expect(await usersWithEmail(body.email)).toBe(0);
    });

    it('password of the wrong type on store-user registration → 400 ValidationFailed', async () => {
      const res = await t.http.post(USER).set('svc-store-codename', store.codename).send(userBody({ password: 12345678 }));
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toMatch(/password/);
    });

    // Unbounded nesting used to overflow class-transformer's stack: a 500 for bad input.
    it.each([
      ['objects', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000)],
      ['arrays', '['.repeat(20000) + ']'.repeat(20000)],
    ])('deeply nested %s → 400 ValidationFailed, not a crash', async (_, deep) => {
      const email = uniqueEmail();
      const raw = `{"email":"${email}","password":"${PASSWORD}","fullname":"Deep","store":{"name":${deep}}}`;
      const res = await postRaw(OWNER, raw);
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toMatch(/nested/);
      expect(await usersWithEmail(email)).toBe(0);
    });

    it('moderate nesting still gets the ordinary field message', async () => {
      const nested = '{"a":'.repeat(20) + '1' + '}'.repeat(20);
      const res = await t.http.post(OWNER).send(ownerBody({ store: { name: JSON.parse(nested) } }));
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toBe('store.name must be a string');
    });

    it('a __proto__ key deeper than the nesting limit is still refused', async () => {
      const deep = '{"a":'.repeat(40) + '{"__proto__":{"polluted":1}}' + '}'.repeat(40);
      const res = await postRaw(OWNER, `{"email":"${uniqueEmail()}","password":"${PASSWORD}","fullname":"Deep","store":{"name":"x","more":${deep}}}`);
      expectError(res, 400);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('size', () => {
    it('a body over 100 kB → 413 PayloadTooLarge, nothing created', async () => {
      const body = ownerBody({ fullname: 'x'.repeat(101 * 1024) });
      const res = await t.http.post(OWNER).send(body);
      expectError(res, 413, 'PayloadTooLarge');
      expect(await usersWithEmail(body.email as string)).toBe(0);
    });

    it('a body just under the limit reaches validation (400, not 413)', async () => {
      const res = await t.http.post(OWNER).send(ownerBody({ fullname: 'x'.repeat(90 * 1024) }));
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toMatch(/fullname/);
    });
  });

  describe('query parameters of GET briefstores', () => {
    it('an unknown query parameter → 400 UnknownField naming it', async () => {
      const res = await t.http.get(BRIEF).query({ sort: 'name' });
      expectError(res, 400, 'UnknownField');
      expect(res.body.detail).toContain('sort');
    });

    it.each([
      ['pageNumber=0', 'pageNumber=0', /pageNumber/],
      ['pageRowCount=-1', 'pageRowCount=-1', /pageRowCount/],
      ['pageRowCount=abc', 'pageRowCount=abc', /pageRowCount/],
      ['a repeated pageNumber', 'pageNumber=1&pageNumber=2', /pageNumber/],
    ])('%s → 400, never a server error', async (_, qs, named) => {
      const res = await t.http.get(`${BRIEF}?${qs}`);
      expectError(res, 400);
      expect(res.body.detail).toMatch(named);
    });

    // These keys are dropped by the transformer rather than refused like other unknown keys.
    it('prototype keys in the query are never a server error and pollute nothing', async () => {
      const before = Object.getOwnPropertyNames(Object.prototype).sort();
      const res = await t.http.get(`${BRIEF}?__proto__=1&constructor=2&prototype=3`);
      expect([200, 400]).toContain(res.status);
      if (res.status === 400) expectError(res, 400);
      else expect(res.body).toMatchObject({ status: 'OK', dataName: 'stores' });
      expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
    });

    it('a store that does not exist → 400 StoreNotFound', async () => {
      const res = await t.http.get(BRIEF).set('svc-store-codename', unique('nostore'));
      expectError(res, 400, 'StoreNotFound');
    });
  });

  describe('routes and methods', () => {
    it.each([
      ['GET', '/auth-api/v1/nothing-here'],
      ['POST', '/auth-api/v2/registerstoreowner'],
      ['GET', '/'],
    ])('%s %s → 404 RouteNotFound', async (method, path) => {
      const res = await (method === 'GET' ? t.http.get(path) : t.http.post(path).send({}));
      expectError(res, 404, 'RouteNotFound');
    });

    // The path exists, the method does not: 405 with the methods it takes (RFC 9110 §15.5.6),
    // not the 404 that says there is nothing there.
    it.each([
      ['GET', OWNER, 'POST'],
      ['PUT', OWNER, 'POST'],
      ['DELETE', USER, 'POST'],
      ['POST', BRIEF, 'GET, HEAD'],
      ['PATCH', BRIEF, 'GET, HEAD'],
      ['PUT', `/auth-api/v1/users/${randomUUID()}`, 'DELETE, GET, HEAD, PATCH'],
      ['DELETE', '/auth-api/.well-known/jwks.json', 'GET, HEAD'],
    ])('wrong method %s %s → 405 MethodNotAllowed, Allow: %s', async (method, path, allow) => {
      const res = await t.http[method.toLowerCase() as 'get' | 'put' | 'delete' | 'post' | 'patch'](path);
      expectError(res, 405, 'MethodNotAllowed');
      expect(res.headers.allow).toBe(allow);
    });

    it('a path under a route but not one stays 404 RouteNotFound, whatever the method', async () => {
      for (const res of [await t.http.delete('/auth-api/v1/users/some-id/not-a-route'), await t.http.put('/auth-api/v1/briefstores/x')]) expectError(res, 404, 'RouteNotFound');
    });
  });

  describe('secrets never leave', () => {
    it('a successful owner registration returns neither the hash nor the password', async () => {
      const res = await t.http.post(OWNER).send(ownerBody()).expect(201);
      expectNoSecrets(res);
      expect(res.body.user).not.toHaveProperty('passwordHash');
      expect(res.body.user).not.toHaveProperty('password');
    });

    it('a successful store-user registration returns neither the hash nor the password', async () => {
      const res = await t.http.post(USER).set('svc-store-codename', store.codename).send(userBody()).expect(201);
      expectNoSecrets(res);
      expect(res.body.user).not.toHaveProperty('passwordHash');
    });

    it('refusals do not echo the password back', async () => {
      const bodies: Array<[string, string, Record<string, unknown>]> = [
        [OWNER, 'root', ownerBody({ extra: PASSWORD })],
        [OWNER, 'root', ownerBody({ email: PASSWORD })],
        [OWNER, 'root', ownerBody({ store: { name: 5, secret: PASSWORD } })],
        [USER, store.codename, userBody({ secret: PASSWORD })],
        [USER, store.codename, userBody({ fullname: 5, password: PASSWORD })],
        [USER, store.codename, userBody({ email: store.ownerEmail })], // duplicate identifier
      ];
      for (const [path, codename, body] of bodies) {
        const res = await t.http.post(path).set('svc-store-codename', codename).send(body);
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expectError(res, res.status);
        expectNoSecrets(res);
      }
    });
  });
});
