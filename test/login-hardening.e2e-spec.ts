import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp, describeWithRedis } from './helpers.js';

// Guessing passwords concurrently, bursts of password hashing, and one password policy for
// every path that reads or sets a password.

const LOGIN = '/auth-api/login';
const USERS = '/auth-api/v1/users';
const REGISTER_USER = '/auth-api/v1/registerstoreuser';
const HEADER = 'svc-store-codename';
const GUESSES = 60;
const ALLOWED = 5;

const limits = (loginPerUsername: { points: number; durationSeconds: number }) => ({
  rateLimits: { loginPerUsername },
});

async function burst(apps: TestApp[], store: RegisteredStore, username: string, count: number) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      apps[i % apps.length].http.post(LOGIN).set(HEADER, store.codename).send({ username, password: `wrong password ${i}` }),
    ),
  );
}

function countBy(responses: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

describe('concurrent password guesses', () => {
  let t: TestApp;
  beforeAll(async () => {
    // cost 8: each check takes long enough for concurrent requests to overlap
    t = await startApp({ env: { BCRYPT_COST: '8', BCRYPT_MAX_PENDING: '1000' }, settings: limits({ points: ALLOWED, durationSeconds: 60 }) });
  });
  afterAll(() => t.close());

  it(`evaluates at most ${ALLOWED} of ${GUESSES} simultaneous wrong passwords; the rest and then the right one get 429`, async () => {
    const store = await registerStore(t.http);
    const responses = await burst([t], store, store.ownerEmail, GUESSES);
    const counts = countBy(responses);
    expect(counts).toEqual({ 401: ALLOWED, 429: GUESSES - ALLOWED });
    const right = await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD });
    expectError(right, 429, 'TooManyRequests');
  });

  it('gives the attempt back on success: 4 failures, a success, then 5 more failures are evaluated', async () => {
    const store = await registerStore(t.http);
    const attempt = (password: string) => t.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password });
    for (let i = 0; i < ALLOWED - 1; i++) expectError(await attempt('not the password'), 401, 'InvalidCredentials');
    await attempt(PASSWORD).expect(200);
    for (let i = 0; i < ALLOWED; i++) expectError(await attempt('not the password'), 401, 'InvalidCredentials');
    expectError(await attempt(PASSWORD), 429, 'TooManyRequests');
  });
});


describeWithRedis('concurrent password guesses on two replicas', 'in-process counters are per instance by design', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const opts = { env: { BCRYPT_COST: '8', BCRYPT_MAX_PENDING: '1000' }, settings: limits({ points: ALLOWED, durationSeconds: 60 }) };
    [a, b] = await Promise.all([startApp(opts), startApp(opts)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it(`evaluates at most ${ALLOWED} guesses in all when ${GUESSES} arrive at once split over both`, async () => {
    const store = await registerStore(a.http);
    const counts = countBy(await burst([a, b], store, store.ownerEmail, GUESSES));
    expect(counts).toEqual({ 401: ALLOWED, 429: GUESSES - ALLOWED });
    for (const app of [a, b]) {
      expectError(await app.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD }), 429, 'TooManyRequests');
    }
  });
});

describe('a burst of password checks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { BCRYPT_COST: '10', BCRYPT_MAX_PENDING: '2' } });
  });
  afterAll(() => t.close());

  it('answers 503 ServiceUnavailable with Retry-After above BCRYPT_MAX_PENDING instead of queueing, and serves again after', async () => {
    const store = await registerStore(t.http);
    // distinct usernames: no per-username limit in the way
    const responses = await Promise.all(
      Array.from({ length: 40 }, () => t.http.post(LOGIN).set(HEADER, store.codename).send({ username: uniqueEmail(), password: 'a wrong password' })),
    );
    const counts = countBy(responses);
    expect(Object.keys(counts).sort()).toEqual(['401', '503']);
    const refused = responses.find((r) => r.status === 503)!;
    expectError(refused, 503, 'ServiceUnavailable');
    expect(refused.headers['retry-after']).toBe('1');
    // nothing stays counted once the burst is over
    await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  });
});

describe('one password policy', () => {
  let t: TestApp;
  let store: RegisteredStore;
  // 72 bytes: the most bcrypt reads (a passphrase, strong enough for passwordPolicy.minScore)
  const LONGEST = 'correct horse battery '.repeat(4).slice(0, 72);
  beforeAll(async () => {
    t = await startApp();
    store = await registerStore(t.http);
  });
  afterAll(() => t.close());

  async function userWithLongestPassword() {
    const email = uniqueEmail();
    const res = await t.http.post(REGISTER_USER).set(HEADER, store.codename).send({ email, password: LONGEST, fullname: 'Long' }).expect(201);
    return { email, id: res.body.user.id as string };
  }

  it('refuses at login what registration refuses: 72 matching bytes plus more is not the password', async () => {
    const { email } = await userWithLongestPassword();
    await login(t.http, email, LONGEST, store.codename);
    for (const password of [`${LONGEST}x`, `${LONGEST}${'x'.repeat(952)}`]) {
      expectError(await t.http.post(LOGIN).set(HEADER, store.codename).send({ username: email, password }), 401, 'InvalidCredentials');
    }
  });

  it('refuses the same at registration, and for a new or current password on change', async () => {
    expectError(await t.http.post(REGISTER_USER).set(HEADER, store.codename).send({ email: uniqueEmail(), password: `${LONGEST}x`, fullname: 'Long' }), 400, 'WeakPassword');
    const { email, id } = await userWithLongestPassword();
    const { accessToken } = await login(t.http, email, LONGEST, store.codename);
    const patch = (body: object) => t.http.patch(`${USERS}/${id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${accessToken}`).send(body);
    expectError(await patch({ password: 'a new password', currentPassword: `${LONGEST}x` }), 403, 'WrongCurrentPassword');
    expectError(await patch({ password: `${'n'.repeat(72)}x`, currentPassword: LONGEST }), 400, 'WeakPassword');
    await patch({ password: 'a new password', currentPassword: LONGEST }).expect(200);
    await login(t.http, email, 'a new password', store.codename);
  });
});

describeWithRedis('two deployments on one Redis', 'in-process counters are never shared', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    const opts = (service: string) => ({
      env: { SERVICE_CODENAME: service, TRUST_PROXY: 'loopback' },
      settings: { rateLimits: { loginPerIp: { points: 2, durationSeconds: 60 }, loginPerUsername: { points: 2, durationSeconds: 60 } } },
    });
    [first, second] = await Promise.all([startApp(opts('auth')), startApp(opts('auth-other'))]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  it('keep their own login counters: keys carry the project and service codenames', async () => {
    const store = await registerStore(first.http);
    const ip = `2001:db8::${unique('').slice(1, 5)}`;
    const attempt = (t: TestApp) => t.http.post(LOGIN).set(HEADER, store.codename).set('X-Forwarded-For', ip).send({ username: store.ownerEmail, password: 'not the password' });
    for (let i = 0; i < 2; i++) expectError(await attempt(first), 401, 'InvalidCredentials');
    expectError(await attempt(first), 429, 'TooManyRequests');
    // the other deployment has seen nothing from this address or for this username
    for (let i = 0; i < 2; i++) expectError(await attempt(second), 401, 'InvalidCredentials');
    expectError(await attempt(second), 429, 'TooManyRequests');

    const redis = new Redis(process.env.REDIS_URL!);
    try {
      expect(await redis.keys(`svc:auth:rl:loginPerIp:${ip}`)).toHaveLength(1);
      expect(await redis.keys(`svc:auth-other:rl:loginPerIp:${ip}`)).toHaveLength(1);
    } finally {
      redis.disconnect();
    }
  });
});
