import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// What the service accepts as its own tokens, and the refusals a client meets at refresh and
// login: one answer for every string that cannot refresh, a session's refreshes that strangers
// cannot use up, a login that named no store told so, and a discovery document a Host header
// does not write.

const HEADER = 'svc-store-codename';
const REFRESH_ON = { accessTokenMinutes: 10 };

describe('issuer and audience of the service\'s own tokens', () => {
  let a: TestApp;
  let b: TestApp;
  let store: RegisteredStore;
  beforeAll(async () => {
    // Two deployments on one database sign with the same keys, for different issuers and audiences.
    a = await startApp({ settings: { tokenIssuer: 'deployment-a', tokenAudience: 'orders-api' } });
    b = await startApp({ settings: { tokenIssuer: 'deployment-b', tokenAudience: 'billing-api' } });
    store = await registerStore(a.http);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const me = (t: TestApp, token: string) => t.http.get('/auth-api/currentuser').set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);

  it('refuses a token of another issuer or audience signed with the same keys, and introspects it as inactive', async () => {
    const own = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    const foreign = await login(b.http, store.ownerEmail, PASSWORD, store.codename);
    await me(a, own.accessToken).expect(200);
    await me(b, foreign.accessToken).expect(200);
    expect((await me(a, foreign.accessToken).expect(401)).body).toEqual({ status: 'ERR', message: 'No login found' });
    expectError(await a.http.get('/auth-api/sessions').set(HEADER, store.codename).set('Authorization', `Bearer ${foreign.accessToken}`), 401, 'Unauthorized');
    expect((await me(b, own.accessToken).expect(401)).body).toEqual({ status: 'ERR', message: 'No login found' });

    const key = (await a.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', `Bearer ${own.accessToken}`).send({ name: 'introspection' }).expect(201)).body.apiKey.key;
    const introspect = async (token: string) => (await a.http.post('/auth-api/introspect').set('Authorization', `Bearer ${key}`).send({ token }).expect(200)).body;
    expect(await introspect(foreign.accessToken)).toEqual({ active: false });
    expect(await introspect(own.accessToken)).toMatchObject({ active: true, sub: store.ownerId });
  });
});

describe('refresh: one answer for what cannot refresh, and limits strangers cannot use up', () => {
  let t: TestApp;
  let store: RegisteredStore;
  let base: string;
  beforeAll(async () => {
    t = await startApp({ settings: { ...REFRESH_ON, rateLimits: { refreshPerSession: { points: 2, durationSeconds: 60 }, refreshPerIp: { points: 1_000_000, durationSeconds: 1 } } } });
    store = await registerStore(t.http);
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => t?.close());

  const refresh = (body: object) => t.http.post('/auth-api/refresh').set(HEADER, store.codename).send(body);

  it('answers 401 RefreshTokenInvalid to an access token, a long string and garbage; 400 only to what is no string', async () => {
    const p = await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    for (const refreshToken of [p.body.accessToken, 'x'.repeat(500), 'garbage', '', `${p.body.refreshToken}x`]) {
      expectError(await refresh({ refreshToken }), 401, 'RefreshTokenInvalid');
    }
    expectError(await refresh({ refreshToken: 42 }), 400, 'ValidationFailed');
    await refresh({ refreshToken: p.body.refreshToken }).expect(200);
  });

  it('charges a session only for refreshes of its own tokens: 250 forged ones naming it leave its refresh working', async () => {
    const victim = await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    // the session's id is in every access token; a refresh token names it in its first part
    const named = (victim.body.refreshToken as string).slice(0, 23);
    const forged = await Promise.all(Array.from({ length: 250 }, () => refresh({ refreshToken: named + randomBytes(32).toString('base64url') })));
    expect(forged.map((r) => r.body.errCode).filter((c) => c !== 'RefreshTokenInvalid')).toEqual([]);
    const next = (await refresh({ refreshToken: victim.body.refreshToken }).expect(200)).body.refreshToken;
    // the session's own limit still holds: 2 a minute
    const last = (await refresh({ refreshToken: next }).expect(200)).body.refreshToken;
    expectError(await refresh({ refreshToken: last }), 429, 'TooManyRequests');
  });
});

describe('a login or refresh that names no store', () => {
  let t: TestApp;
  let store: RegisteredStore;
  beforeAll(async () => {
    t = await startApp({ settings: REFRESH_ON });
    store = await registerStore(t.http);
  });
  afterAll(() => t?.close());

  it('says the root level was tried and which header to send, the same for any username', async () => {
    const storeOwner = await t.http.post('/auth-api/login').send({ username: store.ownerEmail, password: PASSWORD });
    const unknown = await t.http.post('/auth-api/login').send({ username: uniqueEmail(), password: PASSWORD });
    const wrongPassword = await t.http.post('/auth-api/login').send({ username: SUPER_ADMIN.username, password: 'not the password' });
    for (const res of [storeOwner, unknown, wrongPassword]) expectError(res, 401, 'InvalidCredentials');
    expect(storeOwner.body.detail).toMatch(/no store was named, so the root level was tried.*svc-store-codename/);
    // nothing tells an existing account from an unknown one
    expect(new Set([storeOwner.body.detail, unknown.body.detail, wrongPassword.body.detail]).size).toBe(1);
    // naming the store: no such words
    const named = await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: store.ownerEmail, password: 'wrong' });
    expectError(named, 401, 'InvalidCredentials');
    expect(named.body.detail).not.toMatch(/no store was named/);

    const pair = await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    const unnamed = await t.http.post('/auth-api/refresh').send({ refreshToken: pair.body.refreshToken });
    expectError(unnamed, 401, 'RefreshTokenInvalid');
    expect(unnamed.body.detail).toMatch(/no store was named.*svc-store-codename/);
    await t.http.post('/auth-api/refresh').set(HEADER, store.codename).send({ refreshToken: pair.body.refreshToken }).expect(200);
  });
});

describe('the discovery document', () => {
  it('names the service\'s own address, never the Host header\'s', async () => {
    const t = await startApp();
    try {
      await t.app.listen(0, '127.0.0.1');
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      // The Host header is the caller's to write; the request still goes to loopback.
      const doc = (await t.http.get('/auth-api/.well-known/openid-configuration').set('Host', 'evil.example').expect(200)).body;
      expect(JSON.stringify(doc)).not.toContain('evil.example');
      const res = await fetch(`http://127.0.0.1:${port}/auth-api/.well-known/openid-configuration`);
      const listened = (await res.json()) as { jwks_uri: string; introspection_endpoint: string };
      expect(listened.jwks_uri).toBe(`http://127.0.0.1:${port}/auth-api/.well-known/jwks.json`);
      expect(listened.introspection_endpoint).toBe(`http://127.0.0.1:${port}/auth-api/introspect`);
    } finally {
      await t.close();
    }
  });

  it('is built from PUBLIC_URL, which production requires', async () => {
    const production = { NODE_ENV: 'production', SUPER_ADMIN_PASSWORD: 'a production admin password 1', KEY_ENCRYPTION_SECRET: 'a production secret value' };
    await expect(startApp({ env: production })).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(/PUBLIC_URL must be set in production/) });
    const t = await startApp({ env: { ...production, PUBLIC_URL: 'http://127.0.0.1:3000/identity' } });
    try {
      const doc = (await t.http.get('/auth-api/.well-known/openid-configuration').set('Host', 'evil.example').expect(200)).body;
      expect(doc).toMatchObject({ issuer: 'http://127.0.0.1:3000/identity/auth-api', jwks_uri: 'http://127.0.0.1:3000/identity/auth-api/.well-known/jwks.json' });
    } finally {
      await t.close();
    }
  });
});
