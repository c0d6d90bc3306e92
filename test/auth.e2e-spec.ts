import { createHmac, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign, verify, type JsonWebKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { DAY_MS, ManualClock } from '../src/platform/clock/clock.js';
import { login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, type RegisteredStore, type TestApp, expectError as expectErrorShape, updateStoreRow, cookieNamed, setCookies } from './helpers.js';

// Login, logout, the current user, token locations, sessions, signing keys and login limits,
// seen from a client of the real app.

const LOGIN = '/auth-api/login';
const LOGOUT = '/auth-api/logout';
const CURRENT = '/auth-api/currentuser';
const SESSIONS = '/auth-api/sessions';
const PUBLIC_KEY = '/auth-api/publickey';
const JWKS = '/auth-api/.well-known/jwks.json';
const USER = '/auth-api/v1/registerstoreuser';
const HEADER = 'svc-store-codename';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const NO_LOGIN = { status: 'ERR', message: 'No login found' };
const SESSION_KEYS = ['accessToken', 'email', 'fullname', 'roleId', 'sessionId', 'tenantId', 'userBucketToken', 'userId'];
const MOBILE = '+14155552671';

interface Jwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: string;
}

function decode(token: string): Jwt {
  const [h, p, signature] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString('utf8')),
    payload: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')),
    signingInput: `${h}.${p}`,
    signature,
  };
}

function part(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function kidOf(token: string): string {
  return decode(token).header.kid as string;
}

function expectError(res: { status: number; body: Record<string, unknown> }, status: number, errCode: string): void {
  expectErrorShape(res, status, errCode);
  expect(typeof res.body.requestId).toBe('string');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

describe('auth (default settings)', () => {
  let t: TestApp;
  let ds: DataSource;
  beforeAll(async () => {
    t = await startApp();
    ds = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  const post = (codename: string | undefined, body: Record<string, unknown>) => {
    const req = t.http.post(LOGIN);
    if (codename) req.set(HEADER, codename);
    return req.send(body);
  };
  const me = (token: string, codename?: string) => {
    const req = t.http.get(CURRENT).set('Authorization', `Bearer ${token}`);
    if (codename) req.set(HEADER, codename);
    return req;
  };
  async function storeUser(store: RegisteredStore, email = uniqueEmail()): Promise<{ id: string; email: string }> {
    const res = await t.http.post(USER).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Store User' }).expect(201);
    return { id: res.body.user.id, email };
  }

  describe('POST /login', () => {
    it('answers exactly the session: ids, identity, role, the store as tenant and two tokens', async () => {
      const store = await registerStore(t.http);
      const res = await post(store.codename, { username: store.ownerEmail, password: PASSWORD }).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(SESSION_KEYS);
      expect(res.body).toMatchObject({
        userId: store.ownerId,
        email: store.ownerEmail,
        fullname: 'Store Owner',
        roleId: 'tenantOwner',
        tenantId: store.storeId,
      });
      expect(res.body.sessionId).toMatch(UUID);
      expect(res.body.accessToken).toMatch(JWT);
      expect(res.body.userBucketToken).toMatch(JWT);
      expect(res.body.userBucketToken).not.toBe(res.body.accessToken);
      expect(JSON.stringify(res.body)).not.toMatch(/\$2[aby]\$|password|hash/i);
    });

    it('takes `email` as a legacy alias of username', async () => {
      const store = await registerStore(t.http);
      const res = await post(store.codename, { email: store.ownerEmail, password: PASSWORD }).expect(200);
      expect(res.body.userId).toBe(store.ownerId);
    });

    it('lets username win when both are sent', async () => {
      const store = await registerStore(t.http);
      const wins = await post(store.codename, { username: store.ownerEmail, email: uniqueEmail(), password: PASSWORD }).expect(200);
      expect(wins.body.userId).toBe(store.ownerId);
      const loses = await post(store.codename, { username: uniqueEmail(), email: store.ownerEmail, password: PASSWORD });
      expectError(loses, 401, 'InvalidCredentials');
    });

    it('refuses a missing username or password: 400 MissingParameters', async () => {
      const store = await registerStore(t.http);
      expectError(await post(store.codename, { password: PASSWORD }), 400, 'MissingParameters');
      expectError(await post(store.codename, { username: store.ownerEmail }), 400, 'MissingParameters');
      expectError(await post(store.codename, { username: store.ownerEmail, password: '' }), 400, 'MissingParameters');
      expectError(await post(store.codename, {}), 400, 'MissingParameters');
    });

    it('answers a wrong password and an unknown user alike: 401 InvalidCredentials', async () => {
      const store = await registerStore(t.http);
      const wrong = await post(store.codename, { username: store.ownerEmail, password: 'not the password' });
      expectError(wrong, 401, 'InvalidCredentials');
      const unknown = await post(store.codename, { username: uniqueEmail(), password: 'not the password' });
      expectError(unknown, 401, 'InvalidCredentials');
      expect({ ...unknown.body, requestId: undefined }).toEqual({ ...wrong.body, requestId: undefined });
      expect(unknown.body.requestId).not.toBe(wrong.body.requestId);
    });

    it('refuses a deactivated user: 403 UserInactive, but only to the right password', async () => {
      const store = await registerStore(t.http);
      const user = await storeUser(store);
      await ds.query('UPDATE "users" SET "isActive" = false WHERE "id" = $1', [user.id]);
      expectError(await post(store.codename, { username: user.email, password: PASSWORD }), 403, 'UserInactive');
      // a wrong password tells nothing about the account
      expectError(await post(store.codename, { username: user.email, password: 'not the password' }), 401, 'InvalidCredentials');
    });

    it('finds users only in the targeted store: another store or root answers 401', async () => {
      const a = await registerStore(t.http);
      const b = await registerStore(t.http);
      expectError(await post(b.codename, { username: a.ownerEmail, password: PASSWORD }), 401, 'InvalidCredentials');
      expectError(await post(undefined, { username: a.ownerEmail, password: PASSWORD }), 401, 'InvalidCredentials');
      expectError(await post('root', { username: a.ownerEmail, password: PASSWORD }), 401, 'InvalidCredentials');
      await post(a.codename, { username: a.ownerEmail, password: PASSWORD }).expect(200);
    });

    it('logs the super administrator in at root, with the root store as tenant', async () => {
      const [root] = await ds.query(`SELECT "id" FROM "stores" WHERE "codename" = 'root'`);
      const res = await post(undefined, SUPER_ADMIN).expect(200);
      expect(res.body).toMatchObject({ roleId: 'superAdmin', tenantId: root.id, email: SUPER_ADMIN.username });
    });

    it('refuses a login to an inactive store: 403 StoreInactive', async () => {
      const store = await registerStore(t.http);
      await updateStoreRow([t], store.storeId, { isActive: false });
      expectError(await post(store.codename, { username: store.ownerEmail, password: PASSWORD }), 403, 'StoreInactive');
    });
  });

  describe('cookie and header', () => {
    it('sets svc-access-token at root: HttpOnly, SameSite=Lax, Path=/, not Secure in test; the header carries the same token', async () => {
      const res = await post(undefined, SUPER_ADMIN).expect(200);
      const cookie = cookieNamed(res, 'svc-access-token');
      expect(cookie.value).toBe(res.body.accessToken);
      expect(cookie.attrs.has('httponly')).toBe(true);
      expect(cookie.attrs.get('samesite')).toBe('Lax');
      expect(cookie.attrs.get('path')).toBe('/');
      expect(cookie.attrs.has('secure')).toBe(false);
      expect(cookie.attrs.has('domain')).toBe(false);
      expect(Date.parse(cookie.attrs.get('expires')!)).toBeGreaterThan(Date.now());
      expect(res.headers['svc-access-token']).toBe(res.body.accessToken);
    });

    it('names the cookie and header after the store in a store', async () => {
      const store = await registerStore(t.http);
      const res = await post(store.codename, { username: store.ownerEmail, password: PASSWORD }).expect(200);
      const name = `svc-access-token-${store.codename}`;
      expect(cookieNamed(res, name).value).toBe(res.body.accessToken);
      expect(setCookies(res).some((c) => c.startsWith('svc-access-token='))).toBe(false);
      expect(res.headers[name]).toBe(res.body.accessToken);
      expect(res.headers['svc-access-token']).toBeUndefined();
    });
  });

  describe('where the token is read, and in which order', () => {
    let store: RegisteredStore;
    let token: string;
    const garbage = 'garbage.token.value';
    beforeAll(async () => {
      store = await registerStore(t.http);
      token = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    });
    const get = () => t.http.get(CURRENT).set(HEADER, store.codename);

    it('accepts the token alone in the query, a Bearer header, the named header or the cookie', async () => {
      for (const req of [
        t.http.get(CURRENT).query({ access_token: token }).set(HEADER, store.codename),
        get().set('Authorization', `Bearer ${token}`),
        get().set(`svc-access-token-${store.codename}`, token),
        get().set('Cookie', `svc-access-token-${store.codename}=${token}`),
      ]) {
        const res = await req.expect(200);
        expect(res.body.userId).toBe(store.ownerId);
      }
    });

    it('decides on the first place that holds a token', async () => {
      // query before Bearer
      expect((await get().query({ access_token: garbage }).set('Authorization', `Bearer ${token}`).expect(401)).body).toEqual(NO_LOGIN);
      expect((await get().query({ access_token: token }).set('Authorization', `Bearer ${garbage}`).expect(200)).body.userId).toBe(store.ownerId);
      // Bearer before the named header and the cookie
      await get().set('Authorization', `Bearer ${garbage}`).set('Cookie', `svc-access-token-${store.codename}=${token}`).expect(401);
      await get().set('Authorization', `Bearer ${garbage}`).set(`svc-access-token-${store.codename}`, token).expect(401);
      // the named header before the cookie
      await get().set(`svc-access-token-${store.codename}`, garbage).set('Cookie', `svc-access-token-${store.codename}=${token}`).expect(401);
    });

    it("does not read another store's cookie name", async () => {
      const other = await registerStore(t.http);
      await get().set('Cookie', `svc-access-token-${other.codename}=${token}`).expect(401);
    });
  });

  describe('GET /currentuser', () => {
    it('answers the session of the token sent, with that token', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const res = await me(l.accessToken, store.codename).expect(200);
      expect(res.body).toEqual({
        sessionId: l.sessionId,
        userId: store.ownerId,
        email: store.ownerEmail,
        fullname: 'Store Owner',
        roleId: 'tenantOwner',
        tenantId: store.storeId,
        accessToken: l.accessToken,
      });
    });

    it('answers 401 { status: ERR, message: No login found } without a token', async () => {
      const store = await registerStore(t.http);
      expect((await t.http.get(CURRENT).set(HEADER, store.codename).expect(401)).body).toEqual(NO_LOGIN);
      expect((await t.http.get(CURRENT).expect(401)).body).toEqual(NO_LOGIN);
    });

    it('does not take the userBucketToken as an access token', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      expect((await me(l.userBucketToken, store.codename).expect(401)).body).toEqual(NO_LOGIN);
    });
  });

  describe('tenant of the token', () => {
    it("refuses a store's token while another store is targeted: 401 No login found on /currentuser, 403 TenantMismatch elsewhere", async () => {
      const a = await registerStore(t.http);
      const b = await registerStore(t.http);
      const l = await login(t.http, a.ownerEmail, PASSWORD, a.codename);
      expect((await me(l.accessToken, b.codename).expect(401)).body).toEqual(NO_LOGIN);
      expect((await me(l.accessToken).expect(401)).body).toEqual(NO_LOGIN);
      expectError(await t.http.get('/auth-api/v1/users').set(HEADER, b.codename).set('Authorization', `Bearer ${l.accessToken}`), 403, 'TenantMismatch');
    });

    it("lets the super administrator's token act in a store", async () => {
      const store = await registerStore(t.http);
      const admin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
      const res = await t.http.get('/auth-api/v1/users').set(HEADER, store.codename).set('Authorization', `Bearer ${admin.accessToken}`).expect(200);
      expect(res.body.users.map((u: { id: string }) => u.id)).toEqual([store.ownerId]);
      // the root cookie name is read in a store too
      await t.http.get('/auth-api/v1/users').set(HEADER, store.codename).set('Cookie', `svc-access-token=${admin.accessToken}`).expect(200);
    });
  });

  describe('POST /logout', () => {
    it('ends the session at once, answers OK and clears the cookie', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      await me(l.accessToken, store.codename).expect(200);
      const res = await t.http.post(LOGOUT).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
      expect(res.body).toEqual({ status: 'OK', message: expect.any(String) });
      const cookie = cookieNamed(res, `svc-access-token-${store.codename}`);
      expect(cookie.value).toBe('');
      expect(Date.parse(cookie.attrs.get('expires')!)).toBeLessThan(Date.now());
      expect(cookie.attrs.get('path')).toBe('/');
      expect((await me(l.accessToken, store.codename).expect(401)).body).toEqual(NO_LOGIN);
    });

    it('ends only the session of the token sent', async () => {
      const store = await registerStore(t.http);
      const one = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const two = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      await t.http.post(LOGOUT).set(HEADER, store.codename).set('Authorization', `Bearer ${one.accessToken}`).expect(200);
      await me(one.accessToken, store.codename).expect(401);
      await me(two.accessToken, store.codename).expect(200);
    });

    it('is idempotent: the same token again, and no token at all, answer 200', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      await t.http.post(LOGOUT).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
      const again = await t.http.post(LOGOUT).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
      expect(again.body).toEqual({ status: 'OK', message: expect.any(String) });
      const none = await t.http.post(LOGOUT).expect(200);
      expect(none.body).toEqual({ status: 'OK', message: expect.any(String) });
      expect(cookieNamed(none, 'svc-access-token').value).toBe('');
    });
  });

  describe('sessions', () => {
    const list = (token: string, codename: string) => t.http.get(SESSIONS).set(HEADER, codename).set('Authorization', `Bearer ${token}`);

    it('lists your sessions with the current one marked, and ends one of them', async () => {
      const store = await registerStore(t.http);
      const one = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const two = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const res = await list(two.accessToken, store.codename).expect(200);
      expect(res.body.status).toBe('OK');
      const sessions = res.body.sessions as { sessionId: string; current: boolean }[];
      expect(sessions.map((s) => s.sessionId).sort()).toEqual([one.sessionId, two.sessionId].sort());
      expect(sessions.filter((s) => s.current).map((s) => s.sessionId)).toEqual([two.sessionId]);

      const ended = await t.http.delete(`${SESSIONS}/${one.sessionId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${two.accessToken}`).expect(200);
      expect(ended.body).toEqual({ status: 'OK', ended: 1 });
      await me(one.accessToken, store.codename).expect(401);
      await me(two.accessToken, store.codename).expect(200);
      const after = await list(two.accessToken, store.codename).expect(200);
      expect(after.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([two.sessionId]);
    });

    it('ends all your sessions but the current one', async () => {
      const store = await registerStore(t.http);
      const logins = [];
      for (let i = 0; i < 3; i++) logins.push(await login(t.http, store.ownerEmail, PASSWORD, store.codename));
      const [a, b, current] = logins;
      const res = await t.http.delete(SESSIONS).set(HEADER, store.codename).set('Authorization', `Bearer ${current.accessToken}`).expect(200);
      expect(res.body).toEqual({ status: 'OK', ended: 2 });
      await me(a.accessToken, store.codename).expect(401);
      await me(b.accessToken, store.codename).expect(401);
      await me(current.accessToken, store.codename).expect(200);
    });

    it("does not end another user's session: 404 SessionNotFound", async () => {
      const store = await registerStore(t.http);
      const user = await storeUser(store);
      const theirs = await login(t.http, user.email, PASSWORD, store.codename);
      const mine = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const res = await t.http.delete(`${SESSIONS}/${theirs.sessionId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${mine.accessToken}`);
      expectError(res, 404, 'SessionNotFound');
      await me(theirs.accessToken, store.codename).expect(200);
      // nor one that does not exist
      expectError(await t.http.delete(`${SESSIONS}/${randomUUID()}`).set(HEADER, store.codename).set('Authorization', `Bearer ${mine.accessToken}`), 404, 'SessionNotFound');
    });

    it('refuses a malformed session id: 400', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const res = await t.http.delete(`${SESSIONS}/not-a-uuid`).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: 'ERR', status: 400 });
    });

    it('needs a login', async () => {
      const store = await registerStore(t.http);
      expect((await t.http.get(SESSIONS).set(HEADER, store.codename)).status).toBe(401);
      expect((await t.http.delete(SESSIONS).set(HEADER, store.codename)).status).toBe(401);
    });
  });

  describe('forged and altered tokens: 401 No login found', () => {
    let store: RegisteredStore;
    let valid: string;
    let jwt: Jwt;
    let pem: string;
    beforeAll(async () => {
      store = await registerStore(t.http);
      valid = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
      jwt = decode(valid);
      pem = (await t.http.get(PUBLIC_KEY).query({ keyId: jwt.header.kid as string }).expect(200)).body.keyData;
    });
    const expectRefused = async (token: string) => {
      expect((await me(token, store.codename).expect(401)).body).toEqual(NO_LOGIN);
    };

    it('accepts the untouched token (the baseline of this block)', async () => {
      await me(valid, store.codename).expect(200);
    });

    it('refuses alg none with the right claims and kid', async () => {
      await expectRefused(`${part({ ...jwt.header, alg: 'none' })}.${part(jwt.payload)}.`);
      await expectRefused(`${part({ ...jwt.header, alg: 'none' })}.${part(jwt.payload)}.${jwt.signature}`);
    });

    it('refuses HS256 signed with the public key as the HMAC secret', async () => {
      const input = `${part({ ...jwt.header, alg: 'HS256' })}.${part(jwt.payload)}`;
      await expectRefused(`${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`);
    });

    it('refuses a changed payload under the original signature', async () => {
      const user = await storeUser(store);
      const header = jwt.signingInput.split('.')[0];
      await expectRefused(`${header}.${part({ ...jwt.payload, userId: user.id })}.${jwt.signature}`);
      await expectRefused(`${header}.${part({ ...jwt.payload, exp: (jwt.payload.exp as number) + 3600 })}.${jwt.signature}`);
    });

    it('refuses an unknown kid, and no kid', async () => {
      const payload = jwt.signingInput.split('.')[1];
      await expectRefused(`${part({ ...jwt.header, kid: randomUUID() })}.${payload}.${jwt.signature}`);
      const { kid: _kid, ...withoutKid } = jwt.header;
      await expectRefused(`${part(withoutKid)}.${payload}.${jwt.signature}`);
    });

    it('refuses a token signed by another RSA key under the current kid', async () => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const input = `${part(jwt.header)}.${part(jwt.payload)}`;
      await expectRefused(`${input}.${sign('RSA-SHA256', Buffer.from(input), privateKey).toString('base64url')}`);
    });
  });

  describe('signing keys', () => {
    it('GET /publickey: the PEM of the key that signs tokens', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const res = await t.http.get(PUBLIC_KEY).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['keyData', 'keyId', 'status']);
      expect(res.body.status).toBe('OK');
      expect(res.body.keyId).toMatch(UUID);
      expect(res.body.keyData).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n?$/);
      expect(decode(l.accessToken).header).toMatchObject({ alg: 'RS256', kid: res.body.keyId });
      const jwt = decode(l.accessToken);
      expect(verify('RSA-SHA256', Buffer.from(jwt.signingInput), res.body.keyData, Buffer.from(jwt.signature, 'base64url'))).toBe(true);
      // by id too
      const byId = await t.http.get(PUBLIC_KEY).query({ keyId: res.body.keyId }).expect(200);
      expect(byId.body).toEqual(res.body);
    });

    it('GET /publickey?keyId: 404 KeyNotFound for an unknown id, 400 for a malformed one', async () => {
      expectError(await t.http.get(PUBLIC_KEY).query({ keyId: randomUUID() }), 404, 'KeyNotFound');
      const bad = await t.http.get(PUBLIC_KEY).query({ keyId: 'notauuid' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ result: 'ERR', status: 400 });
    });

    it('GET /.well-known/jwks.json lists the current key as a public RSA JWK that verifies tokens', async () => {
      const store = await registerStore(t.http);
      const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      const jwt = decode(l.accessToken);
      const res = await t.http.get(JWKS).expect(200);
      const jwk = (res.body.keys as (JsonWebKey & { kid: string })[]).find((k) => k.kid === jwt.header.kid);
      expect(jwk).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', n: expect.any(String), e: expect.any(String) });
      for (const privatePart of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwk).not.toHaveProperty(privatePart);
      const key = createPublicKey({ key: jwk!, format: 'jwk' });
      expect(verify('RSA-SHA256', Buffer.from(jwt.signingInput), key, Buffer.from(jwt.signature, 'base64url'))).toBe(true);
      const pem = (await t.http.get(PUBLIC_KEY).query({ keyId: jwk!.kid }).expect(200)).body.keyData;
      expect(key.export({ type: 'spki', format: 'pem' })).toBe(pem);
    });
  });
});

describe('login timing: an unknown user costs a bcrypt comparison too', () => {
  let t: TestApp;
  beforeAll(async () => {
    // At cost 10 the hash dominates a login; the suite's cost 4 would drown it in noise.
    t = await startApp({ env: { BCRYPT_COST: '10' } });
  });
  afterAll(() => t.close());

  it('answers an unknown user about as slowly as a known user with a wrong password', async () => {
    const store = await registerStore(t.http);
    const attempt = async (username: string) => {
      const started = process.hrtime.bigint();
      await t.http.post(LOGIN).set(HEADER, store.codename).send({ username, password: 'not the password' }).expect(401);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    // warm-up: the first unknown user also builds the comparison hash
    await attempt(uniqueEmail());
    await attempt(store.ownerEmail);
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 7; i++) {
      known.push(await attempt(store.ownerEmail));
      unknown.push(await attempt(uniqueEmail()));
    }
    expect(median(unknown)).toBeGreaterThanOrEqual(0.5 * median(known));
  });
});

describe('login identifiers', () => {
  describe('mobile primary', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ settings: { primaryLoginIdentifier: 'mobile', secondaryIdentifierPresence: 'none' } });
    });
    afterAll(() => t.close());

    it('logs in by mobile written in another format; an email matches nobody', async () => {
      const store = await registerStore(t.http, { email: undefined, mobile: '+442071838750' });
      const reg = await t.http.post(USER).set(HEADER, store.codename).send({ mobile: MOBILE, password: PASSWORD, fullname: 'Mobile User' }).expect(201);
      const res = await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: '+1 415 555 2671', password: PASSWORD }).expect(200);
      expect(res.body).toMatchObject({ userId: reg.body.user.id, tenantId: store.storeId });
      await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: '+1-415-555-2671', password: PASSWORD }).expect(200);
      expectError(await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: 'someone@example.com', password: PASSWORD }), 401, 'InvalidCredentials');
    });

    it('does not look an email up in the email column', async () => {
      // a user stored with an email from an email-primary past is not found by it
      const store = await registerStore(t.http, { email: undefined, mobile: '+442071838750' });
      const reg = await t.http.post(USER).set(HEADER, store.codename).send({ mobile: MOBILE, password: PASSWORD, fullname: 'Mobile User' }).expect(201);
      const email = uniqueEmail();
      await t.app.get(DataSource).query('UPDATE "users" SET "email" = $1 WHERE "id" = $2', [email, reg.body.user.id]);
      expectError(await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: email, password: PASSWORD }), 401, 'InvalidCredentials');
      await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: MOBILE, password: PASSWORD }).expect(200);
    });
  });

  describe('emailOrMobile', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ settings: { primaryLoginIdentifier: 'emailOrMobile' } });
    });
    afterAll(() => t.close());

    it('logs in by email and by mobile', async () => {
      const store = await registerStore(t.http);
      const email = uniqueEmail();
      const reg = await t.http.post(USER).set(HEADER, store.codename).send({ email, mobile: MOBILE, password: PASSWORD, fullname: 'Both' }).expect(201);
      for (const username of [email, email.toUpperCase(), MOBILE, '+1 (415) 555-2671']) {
        const res = await t.http.post(LOGIN).set(HEADER, store.codename).send({ username, password: PASSWORD }).expect(200);
        expect(res.body.userId).toBe(reg.body.user.id);
      }
    });
  });
});

describe('email verification required for login', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      settings: { emailVerificationRequiredForLogin: true, verification: { verificationMode: 'testMode', flows: { 'email-verification': { enabled: true } } } },
    });
  });
  afterAll(() => t.close());

  it('refuses an unverified user: 403 EmailVerificationNeeded, errMsg_EmailNotVerified, and no cookie', async () => {
    const store = await registerStore(t.http);
    const res = await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD });
    expectError(res, 403, 'EmailVerificationNeeded');
    expect(res.body.message).toBe('errMsg_EmailNotVerified');
    expect(setCookies(res)).toEqual([]);
  });

  it('lets the user in once the email is verified', async () => {
    const store = await registerStore(t.http);
    await t.app.get(DataSource).query('UPDATE "users" SET "emailVerified" = true WHERE "id" = $1', [store.ownerId]);
    await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
  });
});

describe('secure cookie settings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { COOKIE_SECURE: 'true', COOKIE_DOMAIN: 'example.test' } });
  });
  afterAll(() => t.close());

  it('sets Secure and Domain on the login cookie and on the cleared one', async () => {
    const store = await registerStore(t.http);
    const name = `svc-access-token-${store.codename}`;
    const res = await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    const cookie = cookieNamed(res, name);
    expect(cookie.attrs.has('secure')).toBe(true);
    expect(cookie.attrs.get('domain')).toBe('example.test');
    expect(cookie.attrs.has('httponly')).toBe(true);
    const out = await t.http.post(LOGOUT).set(HEADER, store.codename).set('Authorization', `Bearer ${res.body.accessToken}`).expect(200);
    const cleared = cookieNamed(out, name);
    expect(cleared.attrs.has('secure')).toBe(true);
    expect(cleared.attrs.get('domain')).toBe('example.test');
  });
});

describe('token lifetime on a controllable clock', () => {
  const clock = new ManualClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ clock, settings: { tokenPeriodInDays: 1 } });
  });
  afterAll(() => t.close());

  it('refuses a token once tokenPeriodInDays has passed', async () => {
    const store = await registerStore(t.http);
    const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const exp = decode(l.accessToken).payload.exp as number;
    expect(exp * 1000).toBeCloseTo(clock.now().getTime() + DAY_MS, -4);
    clock.advance(DAY_MS - 60_000);
    await t.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
    clock.advance(120_000);
    const res = await t.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(401);
    expect(res.body).toEqual(NO_LOGIN);
  });
});

// Keys live in the shared signing_keys table. A key signs from its creation until signUntil,
// so an app whose clock is far from everyone else's (a random point decades to centuries ahead,
// one per run) finds no key usable at its time and makes its own.
function farFuture(minDays: number, spanDays: number): Date {
  return new Date(Date.now() + (minDays + Math.floor(Math.random() * spanDays)) * DAY_MS + Math.floor(Math.random() * DAY_MS));
}

describe('key rotation on a controllable clock', () => {
  const clock = new ManualClock(farFuture(20_000, 200_000));
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ clock, settings: { tokenPeriodInDays: 1, keyRefreshPeriodInDays: 2 } });
  });
  afterAll(() => t.close());

  it('signs with a new key after keyRefreshPeriodInDays and verifies with the old one until its tokens expire', async () => {
    const store = await registerStore(t.http);
    const me = (token: string) => t.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);
    const jwksKids = async () => ((await t.http.get(JWKS).expect(200)).body.keys as { kid: string }[]).map((k) => k.kid);

    const a = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const k1 = kidOf(a.accessToken);
    await me(a.accessToken).expect(200); // verified once: its later uses skip the signature, never the expiry
    expect((await t.http.get(PUBLIC_KEY).expect(200)).body.keyId).toBe(k1);

    clock.advance(1.9 * DAY_MS);
    const b = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect(kidOf(b.accessToken)).toBe(k1);
    await me(a.accessToken).expect(401); // expired after one day

    clock.advance(0.2 * DAY_MS); // past k1's signUntil
    const c = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const k2 = kidOf(c.accessToken);
    expect(k2).not.toBe(k1);
    expect((await t.http.get(PUBLIC_KEY).expect(200)).body.keyId).toBe(k2);
    await me(b.accessToken).expect(200); // signed by k1, not expired: still good
    await me(c.accessToken).expect(200);
    expect(await jwksKids()).toEqual(expect.arrayContaining([k1, k2]));
    await t.http.get(PUBLIC_KEY).query({ keyId: k1 }).expect(200);

    clock.advance(0.95 * DAY_MS); // b expired, k1 past verifyUntil (signUntil + 1 day), c still valid
    await me(b.accessToken).expect(401);
    expectError(await t.http.get(PUBLIC_KEY).query({ keyId: k1 }), 404, 'KeyNotFound');
    const kids = await jwksKids();
    expect(kids).toContain(k2);
    expect(kids).not.toContain(k1);
    await me(c.accessToken).expect(200);
  });
});

describe('signing keys encrypted at rest', () => {
  const SECRET = 'key-encryption-secret-for-tests';
  const start = farFuture(300_000, 200_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ clock: new ManualClock(start), env: { KEY_ENCRYPTION_SECRET: SECRET }, settings: { tokenPeriodInDays: 1, keyRefreshPeriodInDays: 1 } });
  });
  afterAll(() => t.close());

  it('stores the private key of a new signing key encrypted, and signs and verifies with it', async () => {
    const store = await registerStore(t.http);
    const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const [row] = await t.app.get(DataSource).query('SELECT "privateKey", "publicKey" FROM "signing_keys" WHERE "id" = $1', [kidOf(l.accessToken)]);
    expect(row.privateKey.startsWith('enc:v1:')).toBe(true);
    expect(row.privateKey).not.toContain('BEGIN PRIVATE KEY');
    expect(row.publicKey).toContain('BEGIN PUBLIC KEY');
    await t.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
  });

  it('is not picked up before its creation time by an app without the secret', async () => {
    const store = await registerStore(t.http);
    const encrypted = kidOf((await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken);
    // a day earlier the encrypted key does not exist yet: this app signs with a key of its own
    const earlier = await startApp({ clock: new ManualClock(new Date(start.getTime() - DAY_MS)), settings: { tokenPeriodInDays: 1, keyRefreshPeriodInDays: 1 } });
    try {
      const l = await login(earlier.http, store.ownerEmail, PASSWORD, store.codename);
      expect(kidOf(l.accessToken)).not.toBe(encrypted);
      await earlier.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${l.accessToken}`).expect(200);
    } finally {
      await earlier.close();
    }
  });
});

describe('brute force', () => {
  describe('per username', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ settings: { rateLimits: { loginPerUsername: { points: 3, durationSeconds: 60 } } } });
    });
    afterAll(() => t.close());
    const attempt = (store: RegisteredStore, username: string, password: string) => t.http.post(LOGIN).set(HEADER, store.codename).send({ username, password });

    it('answers 429 TooManyRequests with Retry-After after 3 failures, even to the right password', async () => {
      const store = await registerStore(t.http);
      for (let i = 0; i < 3; i++) expectError(await attempt(store, store.ownerEmail, 'not the password'), 401, 'InvalidCredentials');
      const res = await attempt(store, store.ownerEmail, PASSWORD);
      expectError(res, 429, 'TooManyRequests');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      // the same username in another case and with spaces is the same counter
      expectError(await attempt(store, `  ${store.ownerEmail.toUpperCase()} `, PASSWORD), 429, 'TooManyRequests');
      // another user of the store is not affected
      const other = uniqueEmail();
      await t.http.post(USER).set(HEADER, store.codename).send({ email: other, password: PASSWORD, fullname: 'Other' }).expect(201);
      await attempt(store, other, PASSWORD).expect(200);
    });

    it('counts unknown usernames too', async () => {
      const store = await registerStore(t.http);
      const ghost = uniqueEmail();
      for (let i = 0; i < 3; i++) expectError(await attempt(store, ghost, 'whatever'), 401, 'InvalidCredentials');
      expectError(await attempt(store, ghost, 'whatever'), 429, 'TooManyRequests');
    });

    it('starts counting again after a success', async () => {
      const store = await registerStore(t.http);
      for (let i = 0; i < 2; i++) expectError(await attempt(store, store.ownerEmail, 'not the password'), 401, 'InvalidCredentials');
      await attempt(store, store.ownerEmail, PASSWORD).expect(200);
      for (let i = 0; i < 3; i++) expectError(await attempt(store, store.ownerEmail, 'not the password'), 401, 'InvalidCredentials');
      expectError(await attempt(store, store.ownerEmail, PASSWORD), 429, 'TooManyRequests');
    });
  });

  describe('per username, mobile primary', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ settings: { primaryLoginIdentifier: 'mobile', rateLimits: { loginPerUsername: { points: 3, durationSeconds: 60 } } } });
    });
    afterAll(() => t.close());

    it('counts one number written in several formats as one username', async () => {
      const store = await registerStore(t.http, { email: undefined, mobile: MOBILE });
      const attempt = (username: string, password: string) => t.http.post(LOGIN).set(HEADER, store.codename).send({ username, password });
      for (const written of ['+14155552671', '+1 415 555 2671', '+1-415-555-2671']) {
        expectError(await attempt(written, 'not the password'), 401, 'InvalidCredentials');
      }
      expectError(await attempt('+1 (415) 555-2671', PASSWORD), 429, 'TooManyRequests');
    });
  });

  describe('per client IP', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ env: { TRUST_PROXY: 'loopback' }, settings: { rateLimits: { loginPerIp: { points: 3, durationSeconds: 60 } } } });
    });
    afterAll(() => t.close());

    // A documentation-range IPv6 address unique to this run: the counter may live in a shared Redis.
    const ip = () => `2001:db8::${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;

    it('answers 429 on the 4th login from one address; another address is not affected', async () => {
      const store = await registerStore(t.http);
      const client = ip();
      const attempt = (from: string) => t.http.post(LOGIN).set(HEADER, store.codename).set('X-Forwarded-For', from).send({ username: store.ownerEmail, password: PASSWORD });
      for (let i = 0; i < 3; i++) await attempt(client).expect(200);
      const res = await attempt(client);
      expectError(res, 429, 'TooManyRequests');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      await attempt(ip()).expect(200);
    });
  });
});
