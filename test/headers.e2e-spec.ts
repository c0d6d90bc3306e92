import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PASSWORD, startApp, uniqueEmail, type TestApp } from './helpers.js';

// Response headers a browser or a proxy acts on: nothing that carries a token, a session or a
// key is stored by a cache; HSTS over HTTPS only; the API documentation off in production.

const HEADER = 'svc-store-codename';
const HSTS = 'max-age=31536000; includeSubDomains';

describe('Cache-Control on answers that carry tokens, sessions and keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t?.close());

  it('login, current user, sessions, API keys, registrations and errors: no-store, no ETag', async () => {
    const email = uniqueEmail();
    const owner = await t.http.post('/auth-api/v1/registerstoreowner').send({ email, password: PASSWORD, fullname: 'Owner', store: { name: `Headers ${email}` } }).expect(201);
    const codename = owner.body.store.codename;
    const loggedIn = await t.http.post('/auth-api/login').set(HEADER, codename).send({ username: email, password: PASSWORD }).expect(200);
    const auth = (req: ReturnType<typeof t.http.get>) => req.set(HEADER, codename).set('Authorization', `Bearer ${loggedIn.body.accessToken}`);
    const answers = {
      registration: owner,
      login: loggedIn,
      currentuser: await auth(t.http.get('/auth-api/currentuser')).expect(200),
      sessions: await auth(t.http.get('/auth-api/sessions')).expect(200),
      createKey: await auth(t.http.post('/auth-api/v1/apikeys')).send({ name: 'k' }).expect(201),
      listKeys: await auth(t.http.get('/auth-api/v1/apikeys')).expect(200),
      users: await auth(t.http.get('/auth-api/v1/users')).expect(200),
      refusedLogin: await t.http.post('/auth-api/login').set(HEADER, codename).send({ username: email, password: 'wrong password' }).expect(401),
      noLogin: await t.http.get('/auth-api/currentuser').expect(401),
    };
    // and no ETag: nothing may be revalidated from a cache that must not keep it
    for (const [name, res] of Object.entries(answers)) expect({ name, cacheControl: res.headers['cache-control'], etag: res.headers.etag }).toEqual({ name, cacheControl: 'no-store', etag: undefined });
  });

  it('images still say how long to keep them', async () => {
    const email = uniqueEmail();
    const res = await t.http.post('/auth-api/v1/registerstoreowner').send({ email, password: PASSWORD, fullname: 'Owner', store: { name: `Images ${email}` } }).expect(201);
    const avatar: string = res.body.user.avatar;
    const img = await t.http.get(new URL(avatar, 'http://x').pathname).expect(200);
    expect(img.headers['cache-control']).toMatch(/immutable/);
  });
});

describe('HSTS', () => {
  it('without a trusted proxy, a forwarded https is not believed: no HSTS over plain HTTP', async () => {
    const t = await startApp();
    try {
      for (const proto of [undefined, 'https']) {
        const req = t.http.get('/health/live');
        if (proto) req.set('X-Forwarded-Proto', proto);
        expect((await req.expect(200)).headers['strict-transport-security']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });

  it('behind a trusted proxy (TRUST_PROXY): HSTS when the proxy says https, none when it says http', async () => {
    const t = await startApp({ env: { TRUST_PROXY: 'loopback' } });
    try {
      const secure = await t.http.get('/health/live').set('X-Forwarded-Proto', 'https').expect(200);
      expect(secure.headers['strict-transport-security']).toBe(HSTS);
      const login = await t.http.post('/auth-api/login').set('X-Forwarded-Proto', 'https').send({ username: 'nobody@example.com', password: PASSWORD });
      expect(login.headers['strict-transport-security']).toBe(HSTS);
      const plain = await t.http.get('/health/live').set('X-Forwarded-Proto', 'http').expect(200);
      expect(plain.headers['strict-transport-security']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

describe('/docs', () => {
  const production = { NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:3000', SUPER_ADMIN_PASSWORD: 'a production secret', KEY_ENCRYPTION_SECRET: 'sixteen chars or more' };

  it.each([
    ['in production', 404, production],
    ['in production with DOCS_ENABLED=true', 200, { ...production, DOCS_ENABLED: 'true' }],
    ['outside production', 200, {}],
    ['outside production with DOCS_ENABLED=false', 404, { DOCS_ENABLED: 'false' }],
  ])('%s: /docs → %i', async (_, status, env) => {
    const t = await startApp({ env });
    try {
      expect((await t.http.get('/docs')).status).toBe(status);
      expect((await t.http.get('/docs-json')).status).toBe(status);
    } finally {
      await t.close();
    }
  });

  it('a DOCS_ENABLED that is not a boolean stops the boot, naming it', async () => {
    await expect(startApp({ env: { DOCS_ENABLED: 'maybe' } })).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(/DOCS_ENABLED/) });
  });
});
