import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadSettings } from '../src/settings.js';
import { ConfigError } from '../src/platform/config/env.js';
import { connectSocket, listen, openSse } from './event-clients.js';
import { PASSWORD, registerStore, startApp, waitFor, type TestApp } from './helpers.js';

const DEV_PAGE = 'http://localhost:5173';
const PRODUCTION = { NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:3000', KEY_ENCRYPTION_SECRET: 'a production secret value', SUPER_ADMIN_PASSWORD: 'a production admin password 1' };

describe('CORS with the development default (local dev origins)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers a preflight for POST /auth-api/login from a local dev page', async () => {
    const res = await t.http
      .options('/auth-api/login')
      .set('Origin', DEV_PAGE)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type,authorization,svc-store-codename')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe(DEV_PAGE);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-allow-headers']).toBe('content-type,authorization,svc-store-codename');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('a preflight naming an unknown store is still answered (tenancy comes after)', async () => {
    await t.http.options('/auth-api/v1/users').set('svc-store-codename', 'no-such-store').set('Origin', 'http://127.0.0.1:4200').set('Access-Control-Request-Method', 'GET').expect(204);
  });

  it('lets the page read the store token header and the request id of a login', async () => {
    const store = await registerStore(t.http);
    const res = await t.http
      .post('/auth-api/login')
      .set('Origin', DEV_PAGE)
      .set('svc-store-codename', store.codename)
      .send({ username: store.ownerEmail, password: PASSWORD })
      .expect(200);
    expect(res.headers['access-control-allow-origin']).toBe(DEV_PAGE);
    const exposed = String(res.headers['access-control-expose-headers']).split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', `svc-access-token-${store.codename}`]));
    expect(res.headers[`svc-access-token-${store.codename}`]).toBe(res.body.accessToken);
  });

  it('the store of a body `_store` is exposed too', async () => {
    const store = await registerStore(t.http);
    const res = await t.http.post('/auth-api/login').set('Origin', DEV_PAGE).send({ username: store.ownerEmail, password: PASSWORD, _store: store.codename }).expect(200);
    expect(String(res.headers['access-control-expose-headers'])).toContain(`svc-access-token-${store.codename}`);
  });

  it('error answers carry the CORS headers too, so the page can read the errCode', async () => {
    const res = await t.http.post('/auth-api/login').set('Origin', DEV_PAGE).send({ username: 'nobody@example.com', password: 'wrong password' }).expect(401);
    expect(res.headers['access-control-allow-origin']).toBe(DEV_PAGE);
    expect(res.body.errCode).toBe('InvalidCredentials');
  });

  it('gives no CORS header to another origin, preflight or not', async () => {
    const pre = await t.http.options('/auth-api/login').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'POST').expect(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.headers['access-control-allow-methods']).toBeUndefined();
    const res = await t.http.get('/auth-api/v1/briefstores').set('Origin', 'https://evil.example').expect(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('a look-alike of localhost is not a local dev origin', async () => {
    for (const origin of ['http://localhost.evil.example', 'http://evil.example/http://localhost:3000', 'null']) {
      const res = await t.http.get('/auth-api/v1/briefstores').set('Origin', origin).expect(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});

describe('CORS in production', () => {
  it('admits no origin until configured', async () => {
    const t = await startApp({ env: PRODUCTION });
    try {
      const res = await t.http.options('/auth-api/login').set('Origin', DEV_PAGE).set('Access-Control-Request-Method', 'POST').expect(204);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('admits the configured origins and subdomain patterns, nothing else', async () => {
    const t = await startApp({
      env: PRODUCTION,
      settings: { cors: { allowedOrigins: ['https://app.example.com', 'https://*.preview.example.com'], credentials: true, exposedHeaders: ['x-custom'], maxAgeSeconds: 60 } },
    });
    try {
      for (const origin of ['https://app.example.com', 'https://pr-12.preview.example.com']) {
        const res = await t.http.get('/auth-api/v1/briefstores').set('Origin', origin).expect(200);
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        expect(res.headers['access-control-expose-headers']).toContain('x-custom');
      }
      for (const origin of [DEV_PAGE, 'http://app.example.com', 'https://preview.example.com', 'https://app.example.com.evil.example']) {
        const res = await t.http.get('/auth-api/v1/briefstores').set('Origin', origin).expect(200);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });

  it('any origin without credentials answers `*` and no credentials header', async () => {
    const t = await startApp({ settings: { cors: { allowedOrigins: ['*'], credentials: false, exposedHeaders: [], maxAgeSeconds: 600 } } });
    try {
      const res = await t.http.get('/auth-api/v1/briefstores').set('Origin', 'https://anyone.example').expect(200);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

describe('the event channel admits the origins the HTTP routes admit', () => {
  const APP = 'https://app.example.com';
  const OTHER = 'https://other.example';
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp({ settings: { cors: { allowedOrigins: [APP], credentials: true, exposedHeaders: [], maxAgeSeconds: 600 } } });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it('SSE: a stream from an allowed page carries its CORS headers; another origin gets 403 Forbidden, a client without Origin its stream', async () => {
    const allowed = await openSse(base, '/events/live-sse/stream?topics=storeCreated', { Origin: APP });
    try {
      expect(allowed.status).toBe(200);
      expect(allowed.headers['access-control-allow-origin']).toBe(APP);
      expect(allowed.headers['access-control-allow-credentials']).toBe('true');
      expect(await allowed.next('subscribed')).toEqual({ topics: ['storeCreated'], rejected: [] });
    } finally {
      allowed.close();
    }
    const refused = await openSse(base, '/events/live-sse/stream?topics=storeCreated', { Origin: OTHER });
    await waitFor('the refusal to end', () => refused.ended || undefined);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ errCode: 'Forbidden', detail: expect.stringContaining('cors.allowedOrigins') });
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    // The development default (local pages) no longer applies once origins are listed.
    const dev = await openSse(base, '/events/live-sse/stream?topics=storeCreated', { Origin: DEV_PAGE });
    dev.close();
    expect(dev.status).toBe(403);
    const server = await openSse(base, '/events/live-sse/stream?topics=storeCreated');
    server.close();
    expect(server.status).toBe(200);
  });

  it('Socket.IO: the handshake from an allowed page connects; another origin is refused with Forbidden', async () => {
    const allowed = await connectSocket(base, 'live', {}, { headers: { origin: APP } });
    allowed.close();
    const refusal = await connectSocket(base, 'live', {}, { headers: { origin: OTHER } }).then(
      (client) => (client.close(), undefined),
      (error: Error & { data?: { errCode?: string; detail?: string } }) => error,
    );
    expect(refusal?.message).toBe('errMsg_Forbidden');
    expect(refusal?.data).toMatchObject({ errCode: 'Forbidden', detail: expect.stringContaining('cors.allowedOrigins') });
    const server = await connectSocket(base, 'live');
    server.close();
  });
});

describe('CORS settings', () => {
  const load = (cors: object) => () => loadSettings(undefined, { cors: cors as never });
  it.each([
    [{ allowedOrigins: ['*'], credentials: true }, '"*" cannot be combined with credentials'],
    [{ allowedOrigins: ['https://app.example.com/path'] }, 'allowedOrigins'],
    [{ allowedOrigins: ['app.example.com'] }, 'allowedOrigins'],
    [{ exposedHeaders: ['bad header'] }, 'exposedHeaders'],
  ])('refuses %j at boot', (cors, message) => {
    expect(load(cors)).toThrow(ConfigError);
    expect(load(cors)).toThrow(message);
  });

  it('refuses the event channel\'s former origin list: the channel follows cors.allowedOrigins', () => {
    const load = () => loadSettings(undefined, { eventChannel: { allowedOrigins: ['*'] } as never });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('eventChannel.allowedOrigins');
  });
});
