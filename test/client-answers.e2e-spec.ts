import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// Answers that told a client the wrong thing, now telling it what to do.
const HEADER = 'svc-store-codename';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe('answers that say what to do', () => {
  let t: TestApp;
  let store: RegisteredStore;
  let token: string;
  beforeAll(async () => {
    t = await startApp({ env: { SERVICE_CODENAME: unique('ca') } });
    store = await registerStore(t.http);
    token = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  });
  afterAll(() => t.close());

  describe('a store token sent without the store header', () => {
    it('403 TenantMismatch names the header to send and the token\'s own store', async () => {
      const res = await t.http.get(`/auth-api/v1/users/${store.ownerId}`).set('Authorization', `Bearer ${token}`);
      expectError(res, 403, 'TenantMismatch');
      expect(res.body.detail).toContain(`${HEADER}: ${store.codename}`);
      // Sending it as told works.
      await t.http.get(`/auth-api/v1/users/${store.ownerId}`).set('Authorization', `Bearer ${token}`).set(HEADER, store.codename).expect(200);
    });

    it('sent to another store, names both stores', async () => {
      const other = await registerStore(t.http);
      const res = await t.http.get(`/auth-api/v1/users/${store.ownerId}`).set('Authorization', `Bearer ${token}`).set(HEADER, other.codename);
      expectError(res, 403, 'TenantMismatch');
      expect(res.body.detail).toContain(`"${store.codename}"`);
      expect(res.body.detail).toContain(`"${other.codename}"`);
    });
  });

  describe('POST /logout without the store header', () => {
    it('ends the session and clears the cookie of the token\'s store, not root\'s', async () => {
      const own = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
      const res = await t.http.post('/auth-api/logout').set('Authorization', `Bearer ${own}`).expect(200);
      expect(res.body.message).toBe('Logged out');
      const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatch(new RegExp(`^svc-access-token-${store.codename}=;`));
      expect(cookies[0]).toMatch(/Expires=Thu, 01 Jan 1970/);
      await t.http.get('/auth-api/currentuser').set('Authorization', `Bearer ${own}`).set(HEADER, store.codename).expect(401);
    });

    it('without a token clears the cookie of the store named (root when none)', async () => {
      const res = await t.http.post('/auth-api/logout').expect(200);
      expect(String(res.headers['set-cookie'])).toMatch(/^svc-access-token=;/);
    });
  });

  describe('avatar links', () => {
    const upload = () => t.http.post('/auth-api/bucket/userAvatars/upload').set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).attach('file', PNG, 'a.png');

    it('an upload answers an absolute URL that PATCH /v1/users/:id then accepts', async () => {
      const { url } = (await upload().expect(201)).body as { url: string };
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/auth-api\/bucket\/userAvatars\/download\/key\/[0-9a-f]{40}$/);
      const res = await t.http.patch(`/auth-api/v1/users/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ avatar: url }).expect(200);
      expect(res.body.user.avatar).toBe(url);
    });

    it('the service\'s own relative links are accepted too (generated avatars, downloads)', async () => {
      const user = (await t.http.get(`/auth-api/v1/users/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).expect(200)).body.user;
      const generated = `/auth-api/avatars/${'ab'.repeat(16)}.svg`;
      const download = new URL((await upload().expect(201)).body.url).pathname;
      for (const avatar of [generated, download]) {
        await t.http.patch(`/auth-api/v1/users/${user.id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ avatar }).expect(200);
      }
      for (const avatar of ['/etc/passwd', 'javascript:alert(1)', '/auth-api/avatars/x.svg', 'ftp://example.com/a.png']) {
        const res = await t.http.patch(`/auth-api/v1/users/${user.id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send({ avatar });
        expectError(res, 400, 'ValidationFailed');
      }
    });

    it('with PUBLIC_URL the link is built from it', async () => {
      const other = await startApp({ env: { PUBLIC_URL: 'https://auth.example.test' } });
      try {
        const s = await registerStore(other.http);
        const own = (await login(other.http, s.ownerEmail, PASSWORD, s.codename)).accessToken;
        const res = await other.http.post('/auth-api/bucket/userAvatars/upload').set(HEADER, s.codename).set('Authorization', `Bearer ${own}`).attach('file', PNG, 'a.png').expect(201);
        expect(res.body.url).toMatch(/^https:\/\/auth\.example\.test\/auth-api\/bucket\/userAvatars\/download\/key\//);
      } finally {
        await other.close();
      }
    });
  });

  describe('/notifications cacheKey', () => {
    it('differs between two users of the same store asking the same thing, and is stable for one', async () => {
      const email = uniqueEmail();
      await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Second User' }).expect(201);
      const second = (await login(t.http, email, PASSWORD, store.codename)).accessToken;
      const ask = (bearer: string) => t.http.get('/notifications?pageRowCount=5').set(HEADER, store.codename).set('Authorization', `Bearer ${bearer}`).expect(200);
      const [a1, a2, b] = [await ask(token), await ask(token), await ask(second)];
      expect(a1.body.cacheKey).toBe(a2.body.cacheKey);
      expect(a1.body.cacheKey).not.toBe(b.body.cacheKey);
    });
  });
});
