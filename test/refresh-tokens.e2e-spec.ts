import { createHash, createHmac, generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { DataSource } from 'typeorm';
import { mintMachineToken } from '../src/identity/m2m/machine-token.js';
import { RefreshTokenRepository } from '../src/identity/token/refresh-token.repository.js';
import { ManualClock } from '../src/platform/clock/clock.js';
import { AppConfig } from '../src/platform/config/app-config.js';
import type { SettingsOverrides } from '../src/settings.js';
import {
  cookieNamed,
  describeWithRedis,
  expectError,
  login,
  PASSWORD,
  registerStore,
  startApp,
  uniqueEmail,
  updateStoreRow,
  type RegisteredStore,
  type TestApp,
} from './helpers.js';

// Short access tokens with rotating refresh tokens (settings accessTokenMinutes), the standard
// claims an offline verifier checks, and introspection for backend services.

const HEADER = 'svc-store-codename';
const REFRESH = '/auth-api/refresh';
const CURRENT = '/auth-api/currentuser';
const INTROSPECT = '/auth-api/introspect';
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const reports = generateKeyPairSync('ed25519');
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }) as string;

const REFRESH_SETTINGS: SettingsOverrides = {
  accessTokenMinutes: 5,
  tokenAudience: ['orders-api', 'billing-api'],
  rateLimits: { refreshPerSession: { points: 8, durationSeconds: 60 }, refreshPerIp: { points: 1_000_000, durationSeconds: 1 } },
  machineTokens: { services: [{ name: 'reports', publicKey: pem(reports.publicKey) }], machineToMachineBlockList: [], allowedM2MClients: [] },
};

interface Pair {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  body: Record<string, unknown>;
}

async function loginPair(t: TestApp, store: RegisteredStore, username = store.ownerEmail): Promise<Pair> {
  const res = await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username, password: PASSWORD }).expect(200);
  return { accessToken: res.body.accessToken, refreshToken: res.body.refreshToken, sessionId: res.body.sessionId, body: res.body };
}

function refresh(t: TestApp, codename: string, refreshToken?: string) {
  return t.http.post(REFRESH).set(HEADER, codename).send(refreshToken === undefined ? {} : { refreshToken });
}

function me(t: TestApp, codename: string, accessToken: string) {
  return t.http.get(CURRENT).set(HEADER, codename).set('Authorization', `Bearer ${accessToken}`);
}

describe('refresh tokens off (default): one token living as long as the session', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t?.close());

  it('a login answers no refresh token, its access token lives tokenPeriodInDays, and /refresh refuses', async () => {
    const store = await registerStore(t.http);
    const l = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect(l.body.refreshToken).toBeUndefined();
    expect(l.body.accessTokenExpiresAt).toBeUndefined();
    const claims = decodeJwt(l.accessToken);
    expect(Math.abs(claims.exp! - claims.iat! - 30 * 24 * 3600)).toBeLessThanOrEqual(1);
    expect(claims).toMatchObject({ sub: store.ownerId, sid: l.sessionId, sessionId: l.sessionId, userId: store.ownerId, storeId: store.storeId, iss: expect.stringMatching(/\/auth-api$/) });
    expect(claims.aud).toBeUndefined();
    expectError(await refresh(t, store.codename, 'anything'), 401, 'RefreshTokenInvalid');
  });
});

describe('refresh tokens on (accessTokenMinutes: 5)', () => {
  let t: TestApp;
  const clock = new ManualClock();
  let store: RegisteredStore;
  beforeAll(async () => {
    t = await startApp({ clock, settings: REFRESH_SETTINGS });
    store = await registerStore(t.http);
  });
  afterAll(() => t?.close());

  it('login answers a refresh token and when the access token expires; the access token lives 5 minutes and carries the standard claims', async () => {
    const p = await loginPair(t, store);
    // the session's id, then 256 random bits, base64url
    expect(p.refreshToken).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(p.refreshToken.slice(0, 22), 'base64url').toString('hex')).toBe(p.sessionId.replaceAll('-', ''));
    const claims = decodeJwt(p.accessToken);
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(new Date(p.body.accessTokenExpiresAt as string).getTime()).toBe(claims.exp! * 1000);
    expect(claims).toMatchObject({ sub: store.ownerId, sid: p.sessionId, aud: ['orders-api', 'billing-api'], jti: expect.any(String), iss: expect.stringMatching(/^http.*\/auth-api$/) });
    // only its hash is stored
    const rows: { tokenHash: string }[] = await t.app.get(DataSource).query('SELECT "tokenHash" FROM "refresh_tokens" WHERE "sessionId" = $1', [p.sessionId]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(p.refreshToken);
  });

  it('login → refresh → refresh: each answers a new pair for the same session; the spent token is then refused', async () => {
    const p = await loginPair(t, store);
    const r1 = await refresh(t, store.codename, p.refreshToken).expect(200);
    expect(r1.headers['cache-control']).toBe('no-store');
    expect(r1.body).toMatchObject({ sessionId: p.sessionId, userId: store.ownerId, tenantId: store.storeId, accessToken: expect.any(String), refreshToken: expect.any(String) });
    expect(r1.body.refreshToken).not.toBe(p.refreshToken);
    expect(r1.body.accessToken).not.toBe(p.accessToken);
    expect(decodeJwt(r1.body.accessToken).jti).not.toBe(decodeJwt(p.accessToken).jti);
    await me(t, store.codename, r1.body.accessToken).expect(200);
    const r2 = await refresh(t, store.codename, r1.body.refreshToken).expect(200);
    expect(r2.body.sessionId).toBe(p.sessionId);
    await me(t, store.codename, r2.body.accessToken).expect(200);
  });

  it('the cookies: the refresh token is httpOnly, SameSite=Lax, Secure as the access cookie, with the refresh route as its Path; the cookie alone refreshes', async () => {
    const res = await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    const access = cookieNamed(res, `svc-access-token-${store.codename}`);
    const cookie = cookieNamed(res, `svc-refresh-token-${store.codename}`);
    expect(cookie.value).toBe(res.body.refreshToken);
    expect(cookie.attrs.get('path')).toBe(REFRESH);
    expect(cookie.attrs.has('httponly')).toBe(true);
    expect(cookie.attrs.get('samesite')).toBe('Lax');
    expect(cookie.attrs.has('secure')).toBe(access.attrs.has('secure'));
    expect(new Date(access.attrs.get('expires')!).getTime()).toBe(new Date(res.body.accessTokenExpiresAt).getTime());

    const byCookie = await t.http.post(REFRESH).set(HEADER, store.codename).set('Cookie', `svc-refresh-token-${store.codename}=${cookie.value}`).expect(200);
    const next = cookieNamed(byCookie, `svc-refresh-token-${store.codename}`);
    expect(next.value).toBe(byCookie.body.refreshToken);
    expect(cookieNamed(byCookie, `svc-access-token-${store.codename}`).value).toBe(byCookie.body.accessToken);
  });

  it('an expired access token is refused; a refresh gets a working one', async () => {
    const p = await loginPair(t, store);
    clock.advance(5 * MINUTE_MS + 1000);
    await me(t, store.codename, p.accessToken).expect(401);
    const r = await refresh(t, store.codename, p.refreshToken).expect(200);
    await me(t, store.codename, r.body.accessToken).expect(200);
  });

  it('reuse of a spent token after the grace window ends the session at once: the newest access and refresh tokens stop working', async () => {
    const p = await loginPair(t, store);
    const r1 = await refresh(t, store.codename, p.refreshToken).expect(200);
    clock.advance(11_000);
    expectError(await refresh(t, store.codename, p.refreshToken), 401, 'RefreshTokenReused');
    await me(t, store.codename, r1.body.accessToken).expect(401);
    expectError(await refresh(t, store.codename, r1.body.refreshToken), 401, 'RefreshTokenInvalid');
    const rows: unknown[] = await t.app.get(DataSource).query('SELECT 1 FROM "sessions" WHERE "id" = $1', [p.sessionId]);
    expect(rows).toHaveLength(0);
  });

  it('a burst of refreshes across sessions at once: each session gets its own working pair; one token sent three times gets one pair', async () => {
    const s = await registerStore(t.http);
    const pairs = await Promise.all(Array.from({ length: 10 }, () => loginPair(t, s)));
    const twice = pairs[0];
    const answers = await Promise.all([...pairs.map((p) => refresh(t, s.codename, p.refreshToken)), refresh(t, s.codename, twice.refreshToken), refresh(t, s.codename, twice.refreshToken)]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    answers.forEach((a, i) => expect(a.body.sessionId).toBe((pairs[i] ?? twice).sessionId));
    const [first, ...repeats] = [answers[0], answers[10], answers[11]];
    for (const r of repeats) expect([r.body.accessToken, r.body.refreshToken]).toEqual([first.body.accessToken, first.body.refreshToken]);
    expect(new Set(answers.slice(0, 10).map((a) => a.body.refreshToken)).size).toBe(10);
    // every new pair works, and refreshes again
    await Promise.all(answers.slice(0, 10).map(async (a) => {
      await me(t, s.codename, a.body.accessToken).expect(200);
      await refresh(t, s.codename, a.body.refreshToken).expect(200);
    }));
  });

  it('spends asked in one turn share statements: each is answered for its own token, a token asked twice is spent once', async () => {
    const s = await registerStore(t.http);
    const pairs = await Promise.all(Array.from({ length: 10 }, () => loginPair(t, s)));
    const repo = t.app.get(RefreshTokenRepository);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const now = clock.now();
    const spend = (token: string, sessionId: string) =>
      repo.spend(s.storeId, sha(token), { sessionId, userId: s.ownerId }, { id: randomUUID(), tokenHash: sha(randomUUID()), sealed: 'sealed' }, now, new Date(now.getTime() - DAY_MS));
    const results = await Promise.all([
      ...pairs.map((p) => spend(p.refreshToken, p.sessionId)),
      spend(pairs[0].refreshToken, pairs[0].sessionId),
      spend(randomBytes(32).toString('base64url'), pairs[1].sessionId), // no such token
      spend(pairs[2].refreshToken, pairs[3].sessionId), // another session's token
    ]);
    results.slice(0, 10).forEach((r, i) => expect(r.row?.sessionId).toBe(pairs[i].sessionId));
    expect(results.slice(1, 10).every((r) => r.spent)).toBe(true);
    expect([results[0].spent, results[10].spent].sort()).toEqual([false, true]);
    expect(results[10].row?.id).toBe(results[0].row?.id);
    expect(results[11]).toEqual({ row: undefined, spent: false });
    expect(results[12]).toMatchObject({ row: { sessionId: pairs[2].sessionId }, spent: false });
    clock.advance(11_000); // past the grace window: these successors were never handed out
    for (const p of pairs) expectError(await refresh(t, s.codename, p.refreshToken), 401, 'RefreshTokenReused');
  });

  it('a token spent over a day ago is forgotten at the session\'s next refresh: sent again it is unknown, and the session lives on', async () => {
    const p = await loginPair(t, store);
    const r1 = await refresh(t, store.codename, p.refreshToken).expect(200);
    const spentRow = () => t.app.get(DataSource).query('SELECT 1 FROM "refresh_tokens" WHERE "tokenHash" = $1', [createHash('sha256').update(p.refreshToken).digest('hex')]);
    clock.advance(DAY_MS - MINUTE_MS);
    const r2 = await refresh(t, store.codename, r1.body.refreshToken).expect(200);
    expect(await spentRow()).toHaveLength(1); // not a day yet
    clock.advance(2 * MINUTE_MS);
    const r3 = await refresh(t, store.codename, r2.body.refreshToken).expect(200);
    expect(await spentRow()).toHaveLength(0);
    expectError(await refresh(t, store.codename, p.refreshToken), 401, 'RefreshTokenInvalid');
    await me(t, store.codename, r3.body.accessToken).expect(200);
  });

  it('the grace window: two concurrent refreshes of one token get the same new pair; a retry within 10 s too; the pair works', async () => {
    const p = await loginPair(t, store);
    const [a, b] = await Promise.all([refresh(t, store.codename, p.refreshToken), refresh(t, store.codename, p.refreshToken)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.refreshToken).toBe(a.body.refreshToken);
    expect(b.body.accessToken).toBe(a.body.accessToken);
    clock.advance(9_000);
    const retry = await refresh(t, store.codename, p.refreshToken).expect(200);
    expect(retry.body).toMatchObject({ refreshToken: a.body.refreshToken, accessToken: a.body.accessToken });
    const rows: unknown[] = await t.app.get(DataSource).query('SELECT 1 FROM "refresh_tokens" WHERE "sessionId" = $1', [p.sessionId]);
    expect(rows).toHaveLength(2); // one rotation
    await me(t, store.codename, a.body.accessToken).expect(200);
    await refresh(t, store.codename, a.body.refreshToken).expect(200);
  });

  it('unknown, other-store and expired refresh tokens → 401 RefreshTokenInvalid', async () => {
    const other = await registerStore(t.http);
    const p = await loginPair(t, store);
    expectError(await refresh(t, store.codename, 'x'.repeat(43)), 401, 'RefreshTokenInvalid');
    expectError(await refresh(t, store.codename), 401, 'RefreshTokenInvalid');
    expectError(await refresh(t, other.codename, p.refreshToken), 401, 'RefreshTokenInvalid');
    expectError(await t.http.post(REFRESH).send({ refreshToken: p.refreshToken }), 401, 'RefreshTokenInvalid'); // root
    await refresh(t, store.codename, p.refreshToken).expect(200); // still unspent: the refusals did not touch it

    const late = await loginPair(t, store);
    clock.advance(31 * 24 * 60 * MINUTE_MS);
    expectError(await refresh(t, store.codename, late.refreshToken), 401, 'RefreshTokenInvalid');
  });

  it('logout ends the refresh token (also by the refresh token alone) and clears both cookies', async () => {
    const p = await loginPair(t, store);
    const out = await t.http.post('/auth-api/logout').set(HEADER, store.codename).set('Authorization', `Bearer ${p.accessToken}`).expect(200);
    expect(cookieNamed(out, `svc-refresh-token-${store.codename}`).attrs.get('path')).toBe(REFRESH);
    expectError(await refresh(t, store.codename, p.refreshToken), 401, 'RefreshTokenInvalid');

    const q = await loginPair(t, store);
    const byRefresh = await t.http.post('/auth-api/logout').set(HEADER, store.codename).send({ refreshToken: q.refreshToken }).expect(200);
    expect(byRefresh.body.message).toBe('Logged out');
    await me(t, store.codename, q.accessToken).expect(401);
  });

  it('a password change ends the other sessions\' refresh tokens; a deactivated user or store refreshes no more', async () => {
    const s = await registerStore(t.http);
    const current = await loginPair(t, s);
    const elsewhere = await loginPair(t, s);
    await t.http
      .patch(`/auth-api/v1/users/${s.ownerId}`)
      .set(HEADER, s.codename)
      .set('Authorization', `Bearer ${current.accessToken}`)
      .send({ password: 'a brand new password 42', currentPassword: PASSWORD })
      .expect(200);
    expectError(await refresh(t, s.codename, elsewhere.refreshToken), 401, 'RefreshTokenInvalid');
    const kept = await refresh(t, s.codename, current.refreshToken).expect(200);

    await updateStoreRow([t], s.storeId, { isActive: false });
    expectError(await refresh(t, s.codename, kept.body.refreshToken), 401, 'RefreshTokenInvalid');
  });

  it('a made-up token naming a live session is refused and does not use up that session\'s refreshes', async () => {
    const p = await loginPair(t, store);
    const named = p.refreshToken.slice(0, 23);
    for (let i = 0; i < 10; i++) expectError(await refresh(t, store.codename, named + randomBytes(32).toString('base64url')), 401, 'RefreshTokenInvalid');
    // a token naming a session of its own store it does not belong to
    const other = await loginPair(t, store);
    expectError(await refresh(t, store.codename, named + other.refreshToken.slice(23)), 401, 'RefreshTokenInvalid');
    await refresh(t, store.codename, p.refreshToken).expect(200); // past rateLimits.refreshPerSession's 8 points without the giving back
    await refresh(t, store.codename, other.refreshToken).expect(200);
  });

  it('a token of the previous format (no session in it) refreshes; one spent by a previous build answers its derived pair within the grace window', async () => {
    const db = t.app.get(DataSource);
    const pepper = t.app.get(AppConfig).env.KEY_ENCRYPTION_SECRET ?? '';
    const p = await loginPair(t, store);
    const [{ expiresAt }]: { expiresAt: Date }[] = await db.query('SELECT "expiresAt" FROM "refresh_tokens" WHERE "sessionId" = $1', [p.sessionId]);
    const familyKey = randomBytes(32).toString('hex');
    const row = (token: string, extra: { spentAt?: Date; successorId?: string; id?: string } = {}) =>
      db.query(
        `INSERT INTO "refresh_tokens" ("id", "storeId", "userId", "sessionId", "tokenHash", "familyKey", "createdAt", "expiresAt", "spentAt", "successorId")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [extra.id ?? randomUUID(), store.storeId, store.ownerId, p.sessionId, sha256(token), familyKey, clock.now(), expiresAt, extra.spentAt ?? null, extra.successorId ?? null],
      );

    const legacy = randomBytes(32).toString('base64url');
    await row(legacy);
    const r = await refresh(t, store.codename, legacy).expect(200);
    expect(r.body.refreshToken.slice(0, 22)).toBe(p.refreshToken.slice(0, 22));
    clock.advance(2_000);
    const retry = await refresh(t, store.codename, legacy).expect(200);
    expect(retry.body).toMatchObject({ refreshToken: r.body.refreshToken, accessToken: r.body.accessToken });
    await me(t, store.codename, r.body.accessToken).expect(200);

    // spent by a previous build a second ago: its successor was derived from the family key
    const spentLegacy = randomBytes(32).toString('base64url');
    const derived = createHmac('sha256', `${familyKey}:${pepper}`).update(spentLegacy).digest('base64url');
    const successorId = randomUUID();
    await row(derived, { id: successorId });
    await row(spentLegacy, { spentAt: new Date(clock.now().getTime() - 1_000), successorId });
    const again = await refresh(t, store.codename, spentLegacy).expect(200);
    expect(again.body.refreshToken).toBe(derived);
    expect(decodeJwt(again.body.accessToken).jti).toBe(successorId);
    await refresh(t, store.codename, derived).expect(200);
  });

  it('refreshes are limited per session (rateLimits.refreshPerSession)', async () => {
    const p = await loginPair(t, store);
    let token = p.refreshToken;
    for (let i = 0; i < 8; i++) token = (await refresh(t, store.codename, token).expect(200)).body.refreshToken;
    const limited = await refresh(t, store.codename, token);
    expectError(limited, 429, 'TooManyRequests');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('refreshes per address (rateLimits.refreshPerIp)', () => {
  let t: TestApp;
  let store: RegisteredStore;
  beforeAll(async () => {
    t = await startApp({ env: { TRUST_PROXY: 'loopback' }, settings: { ...REFRESH_SETTINGS, rateLimits: { refreshPerIp: { points: 3, durationSeconds: 60 } } } });
    store = await registerStore(t.http);
  });
  afterAll(() => t?.close());

  it('unknown tokens use up the address; a live token refused there is not spent, and refreshes from another address', async () => {
    const from = (address: string, token: string) => refresh(t, store.codename, token).set('X-Forwarded-For', address);
    const [a, b] = [`10.${randomOctets()}`, `10.${randomOctets()}`];
    for (let i = 0; i < 3; i++) expectError(await from(a, `unknown-${i}`), 401, 'RefreshTokenInvalid');
    expectError(await from(a, 'unknown-4'), 429, 'TooManyRequests');
    const p = await loginPair(t, store);
    const refused = await from(a, p.refreshToken);
    expectError(refused, 429, 'TooManyRequests');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const elsewhere = await from(b, p.refreshToken).expect(200);
    expect(elsewhere.body.sessionId).toBe(p.sessionId);
  });
});

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

function randomOctets(): string {
  return Array.from(randomBytes(3)).join('.');
}

describe('refresh tokens with a second factor', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      settings: {
        accessTokenMinutes: 5,
        email2FARequiredForLogin: true,
        verification: { verificationMode: 'testMode', flows: { 'email-2factor-verification': { enabled: true } } },
      },
    });
  });
  afterAll(() => t?.close());

  it('completing the factor answers a fresh pair; the refresh token of the pending login is dropped', async () => {
    const store = await registerStore(t.http);
    const pending = await loginPair(t, store);
    expect(pending.body.sessionNeedsEmail2FA).toBe(true);
    const flow = '/auth-api/verification-services/email-2factor-verification';
    const started = await t.http.post(`${flow}/start`).set(HEADER, store.codename).set('Authorization', `Bearer ${pending.accessToken}`).expect(200);
    const done = await t.http
      .post(`${flow}/complete`)
      .set(HEADER, store.codename)
      .set('Authorization', `Bearer ${pending.accessToken}`)
      .send({ secretCode: started.body.secretCode })
      .expect(200);
    expect(done.body).toMatchObject({ sessionId: pending.sessionId, refreshToken: expect.any(String), accessTokenExpiresAt: expect.any(String) });
    expect(done.body.sessionNeedsEmail2FA).toBeUndefined();
    expect(cookieNamed(done, `svc-refresh-token-${store.codename}`).value).toBe(done.body.refreshToken);
    expectError(await refresh(t, store.codename, pending.refreshToken), 401, 'RefreshTokenInvalid');
    const next = await refresh(t, store.codename, done.body.refreshToken).expect(200);
    await me(t, store.codename, next.body.accessToken).expect(200);
  });
});

describe('refresh tokens and a password reset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ settings: { accessTokenMinutes: 5, verification: { verificationMode: 'testMode', flows: { 'password-reset-by-email': { enabled: true } } } } });
  });
  afterAll(() => t?.close());

  it('a reset ends every refresh token of the user', async () => {
    const store = await registerStore(t.http);
    const p = await loginPair(t, store);
    const flow = '/auth-api/verification-services/password-reset-by-email';
    const started = await t.http.post(`${flow}/start`).set(HEADER, store.codename).send({ email: store.ownerEmail }).expect(200);
    await t.http.post(`${flow}/complete`).set(HEADER, store.codename).send({ email: store.ownerEmail, secretCode: started.body.secretCode, password: 'a brand new password 42' }).expect(200);
    expectError(await refresh(t, store.codename, p.refreshToken), 401, 'RefreshTokenInvalid');
  });
});

describe('offline verification with jose: discovery document, JWKS, issuer and audience', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp({ settings: { accessTokenMinutes: 10, tokenAudience: 'orders-api' } });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => t?.close());

  it('createRemoteJWKSet + jwtVerify with the discovered issuer and the audience accept an access token, and refuse a bucket token', async () => {
    const store = await registerStore(t.http);
    const p = await loginPair(t, store);
    const discovery = (await (await fetch(`${base}/auth-api/.well-known/openid-configuration`)).json()) as { issuer: string; jwks_uri: string };
    expect(discovery).toMatchObject({ issuer: expect.stringMatching(/\/auth-api$/), jwks_uri: `${base}/auth-api/.well-known/jwks.json`, introspection_endpoint: `${base}${INTROSPECT}` });
    const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
    const { payload } = await jwtVerify(p.accessToken, jwks, { issuer: discovery.issuer, audience: 'orders-api', algorithms: ['RS256'] });
    expect(payload).toMatchObject({ sub: store.ownerId, sid: p.sessionId, storeId: store.storeId });
    await expect(jwtVerify(p.accessToken, jwks, { issuer: discovery.issuer, audience: 'someone-else' })).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
    await expect(jwtVerify(p.accessToken, jwks, { issuer: 'https://impostor.example/auth-api', audience: 'orders-api' })).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
    await expect(jwtVerify(p.body.userBucketToken as string, jwks, { issuer: discovery.issuer, audience: 'orders-api' })).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
  });

  it('tokenIssuer names the issuer', async () => {
    const named = await startApp({ settings: { accessTokenMinutes: 10, tokenIssuer: 'https://id.example.com/auth-api' } });
    try {
      const store = await registerStore(named.http);
      const p = await loginPair(named, store);
      expect(decodeJwt(p.accessToken).iss).toBe('https://id.example.com/auth-api');
      expect((await named.http.get('/auth-api/.well-known/openid-configuration').expect(200)).body.issuer).toBe('https://id.example.com/auth-api');
    } finally {
      await named.close();
    }
  });
});

describe('introspection', () => {
  let t: TestApp;
  let store: RegisteredStore;
  let owner: Pair;
  let apiKey: string;
  beforeAll(async () => {
    t = await startApp({ settings: REFRESH_SETTINGS });
    store = await registerStore(t.http);
    owner = await loginPair(t, store);
    const created = await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', `Bearer ${owner.accessToken}`).send({ name: 'introspection' }).expect(201);
    apiKey = created.body.apiKey.key;
  });
  afterAll(() => t?.close());

  async function byMachine(token: string, hint?: string) {
    const body = new URLSearchParams({ token, ...(hint && { token_type_hint: hint }) }).toString();
    const machineToken = await mintMachineToken({ service: 'reports', privateKey: reports.privateKey, body, method: 'POST', path: INTROSPECT });
    return t.http.post(INTROSPECT).set('svc-machine-token', machineToken).set('Content-Type', 'application/x-www-form-urlencoded').send(body).expect(200);
  }

  const byKey = (key: string, token: string) => t.http.post(INTROSPECT).set('Authorization', `Bearer ${key}`).send({ token });

  it('a calling service (form body) sees a live access token, API key and refresh token', async () => {
    const p = await loginPair(t, store);
    const access = await byMachine(p.accessToken);
    const claims = decodeJwt(p.accessToken);
    expect(access.body).toEqual({
      active: true,
      sub: store.ownerId,
      sid: p.sessionId,
      storeId: store.storeId,
      storeCodename: store.codename,
      roleId: 'tenantOwner',
      exp: claims.exp,
      iat: claims.iat,
      token_type: 'access_token',
      // a password sign-in: one method
      acr: 'aal1',
      amr: ['pwd'],
      auth_time: claims.auth_time,
    });
    expect(claims.auth_time).toEqual(expect.any(Number));
    const key = await byMachine(apiKey, 'api_key');
    expect(key.body).toMatchObject({ active: true, sub: store.ownerId, storeId: store.storeId, token_type: 'api_key' });
    // a key proves no sign-in
    expect(key.body.amr).toBeUndefined();
    expect((await byMachine(p.refreshToken, 'refresh_token')).body).toMatchObject({ active: true, sub: store.ownerId, sid: p.sessionId, token_type: 'refresh_token' });
    // the hint is only a hint
    expect((await byMachine(p.refreshToken, 'access_token')).body).toMatchObject({ active: true, token_type: 'refresh_token' });
  });

  it('{ active: false } for a spent refresh token, an ended session, garbage, and an expired access token', async () => {
    const p = await loginPair(t, store);
    const r = await refresh(t, store.codename, p.refreshToken).expect(200);
    expect((await byMachine(p.refreshToken)).body).toEqual({ active: false });
    await t.http.post('/auth-api/logout').set(HEADER, store.codename).set('Authorization', `Bearer ${r.body.accessToken}`).expect(200);
    expect((await byMachine(r.body.accessToken)).body).toEqual({ active: false });
    expect((await byMachine(r.body.refreshToken)).body).toEqual({ active: false });
    expect((await byMachine('not a token')).body).toEqual({ active: false });
  });

  it('an administrator\'s API key sees its own store\'s tokens only; a login or a plain user\'s key may not call it', async () => {
    const p = await loginPair(t, store);
    expect((await byKey(apiKey, p.accessToken).expect(200)).body).toMatchObject({ active: true, sub: store.ownerId });
    const other = await registerStore(t.http);
    const stranger = await loginPair(t, other);
    expect((await byKey(apiKey, stranger.accessToken).expect(200)).body).toEqual({ active: false });
    // a login is no credential here: the route takes machine tokens (and keys) only
    expect((await t.http.post(INTROSPECT).set('Authorization', `Bearer ${p.accessToken}`).send({ token: p.accessToken })).status).toBe(401);

    const userEmail = uniqueEmail();
    await t.http.post('/auth-api/users').set(HEADER, store.codename).set('Authorization', `Bearer ${owner.accessToken}`).send({ email: userEmail, password: PASSWORD, fullname: 'Plain User' }).expect(201);
    const user = await loginPair(t, store, userEmail);
    const userKey = await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', `Bearer ${user.accessToken}`).send({ name: 'mine' });
    if (userKey.status === 201) expectError(await byKey(userKey.body.apiKey.key, p.accessToken), 403, 'Forbidden');
    else expect(userKey.status).toBe(403); // plain users may not make keys at all
  });

  it('no token → 400 ValidationFailed; no credential → 401', async () => {
    expectError(await t.http.post(INTROSPECT).set('Authorization', `Bearer ${apiKey}`).send({}), 400, 'ValidationFailed');
    expect((await t.http.post(INTROSPECT).send({ token: 'x' })).status).toBe(401);
  });
});

describeWithRedis('refresh on two replicas', 'the session cache and the limits must be shared', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await Promise.all([startApp({ settings: REFRESH_SETTINGS }), startApp({ settings: REFRESH_SETTINGS })]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('both refreshing one token at once: exactly one rotation, both get the same pair', async () => {
    const store = await registerStore(a.http);
    for (let i = 0; i < 5; i++) {
      const p = await loginPair(a, store);
      const [x, y] = await Promise.all([refresh(a, store.codename, p.refreshToken), refresh(b, store.codename, p.refreshToken)]);
      expect([x.status, y.status]).toEqual([200, 200]);
      expect(y.body.refreshToken).toBe(x.body.refreshToken);
      expect(y.body.accessToken).toBe(x.body.accessToken);
      const rows: unknown[] = await a.app.get(DataSource).query('SELECT 1 FROM "refresh_tokens" WHERE "sessionId" = $1', [p.sessionId]);
      expect(rows).toHaveLength(2);
    }
  });

  it('reuse detected on B ends the session on A at once', async () => {
    const store = await registerStore(a.http);
    const p = await loginPair(a, store);
    const r = await refresh(a, store.codename, p.refreshToken).expect(200);
    await me(a, store.codename, r.body.accessToken).expect(200); // A has cached the session
    const noGrace = await startApp({ settings: { ...REFRESH_SETTINGS, refreshReuseGraceSeconds: 0 } });
    try {
      expectError(await refresh(noGrace, store.codename, p.refreshToken), 401, 'RefreshTokenReused');
    } finally {
      await noGrace.close();
    }
    await me(a, store.codename, r.body.accessToken).expect(401);
  });
});
