import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { describeIf, expectError, login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type RegisteredStore, type TestApp } from './helpers.js';
import { smtp, startMailServer, type MailServer } from './mail-server.js';
import { PrivatePostgres, PrivateRedis, privateServersAvailable } from './private-servers.js';

// PostgreSQL and Redis stopped under a running service, then started again: 503 with
// Retry-After while one is down, readiness says so, and service resumes by itself. A request
// that sends a notification (a verification code by mail) fails as fast as the others.

const LOGIN = '/auth-api/login';
const CURRENT = '/auth-api/currentuser';
const HEADER = 'svc-store-codename';
const RECOVERY_MS = 5_000;
const START_EMAIL_VERIFICATION = '/auth-api/verification-services/email-verification/start';
// A request during an outage answers well within this, never waiting for the outage to end.
const FAST_MS = 5_000;

const describeWithServers = describeIf(privateServersAvailable, 'needs PostgreSQL binaries in /usr/lib/postgresql/15/bin or PG_BIN, and redis-server');

describeWithServers('outages', () => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let t: TestApp;
  let store: RegisteredStore;
  let token: string;
  let mail: MailServer;
  const printed: string[] = [];

  beforeAll(async () => {
    [pg, redis, mail] = await Promise.all([PrivatePostgres.start(), PrivateRedis.start(), startMailServer()]);
    // what ioredis (or anything else) prints outside the log
    for (const method of ['error', 'warn', 'log'] as const) {
      jest.spyOn(console, method).mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(' ')));
    }
    t = await startApp({
      env: { DATABASE_URL: pg.url, REDIS_URL: redis.url },
      settings: {
        verification: { verificationMode: 'testMode', flows: { 'email-verification': { enabled: true } } },
        notifications: {
          providers: [smtp('mail', mail.port)],
          channels: [
            { channelName: 'email', providers: ['mail'], fallbackProviders: [] },
            { channelName: 'inApp', providers: [], fallbackProviders: [] },
          ],
        },
      },
    });
    store = await registerStore(t.http);
    token = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  }, 60_000);
  let closed = false;
  afterAll(async () => {
    if (!closed) await t?.close();
    await redis?.stop();
    pg?.destroy();
    await mail?.close();
    jest.restoreAllMocks();
  }, 60_000); // closing waits for connections to the private servers to settle: slow on a loaded machine

  const tryLogin = () => t.http.post(LOGIN).set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD });
  const current = () => t.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);
  const startVerification = (email = store.ownerEmail) => t.http.post(START_EMAIL_VERIFICATION).set(HEADER, store.codename).send({ email }).timeout(FAST_MS);
  const register = (email = uniqueEmail()) => t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Ada Lovelace' }).timeout(FAST_MS);
  const users = () => t.http.get('/auth-api/v1/users').set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);

  function expectUnavailable(res: { status: number; body: unknown; headers: Record<string, string> }): void {
    expectError(res, 503, 'ServiceUnavailable');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }

  it('PostgreSQL down: login and database reads answer 503 ServiceUnavailable with Retry-After; ready 503, live 200', async () => {
    await t.http.get('/health/ready').expect(200);
    pg.stop();
    expectUnavailable(await tryLogin());
    expectUnavailable(await users());
    // the session may still be served from the cache; never a 500
    expect([200, 503]).toContain((await current()).status);
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toBeDefined();
    await t.http.get('/health/live').expect(200);
  });

  it(`PostgreSQL back: login, reads and readiness recover by themselves within ${RECOVERY_MS / 1000} s`, async () => {
    pg.resume();
    await waitFor('login after PostgreSQL restarts', async () => ((await tryLogin()).status === 200 ? true : undefined), RECOVERY_MS);
    await users().expect(200);
    await t.http.get('/health/ready').expect(200);
  });

  it('Redis down: login and authenticated routes answer 503 with Retry-After; ready 503; nothing printed', async () => {
    await redis.stop();
    expectUnavailable(await tryLogin());
    expectUnavailable(await current());
    expectUnavailable(await users());
    expect((await t.http.get('/health/ready')).status).toBe(503);
    await t.http.get('/health/live').expect(200);
    // give the client a few reconnection attempts to complain about
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(printed.filter((line) => /Unhandled error event|ECONNREFUSED/.test(line))).toEqual([]);
  });

  it(`Redis down: a verification start (it queues the mail with the code) and a registration answer 503 within ${FAST_MS / 1000} s`, async () => {
    // the previous test stopped Redis; the queue's connection has noticed by now
    expectUnavailable(await startVerification());
    expectUnavailable(await register());
  });

  it(`Redis back: service recovers by itself within ${RECOVERY_MS / 1000} s`, async () => {
    await redis.resume();
    await waitFor('login after Redis restarts', async () => ((await tryLogin()).status === 200 ? true : undefined), RECOVERY_MS);
    await current().expect(200);
    await t.http.get('/health/ready').expect(200);
  });

  it('Redis back: registration and a verification start work again, and the mail with the code arrives', async () => {
    // a new address: the one refused above is within its resend window
    const email = uniqueEmail();
    await register(email).expect(201);
    const started = await startVerification(email).expect(200);
    const code = started.body.secretCode as string;
    expect(code).toMatch(/^\d{6}$/);
    await waitFor('the verification mail', () => mail.to(email).find((r) => `${r.mail.text ?? ''}${r.mail.html || ''}`.includes(code)));
  });

  // Logins sent while Redis is down are answered 503 at once: none is held until Redis returns,
  // when all of them would reserve an attempt on the account together and the ones past the
  // account's limit (5) would be refused with the right password.
  it('Redis down: logins are not held for its return; the right password is never answered 429', async () => {
    await redis.stop();
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // the client reconnects every ~0.5 s by now
    const sent = Array.from({ length: 8 }, () => tryLogin().then((res) => res.status));
    await redis.resume();
    const statuses = await Promise.all(sent);
    expect(statuses.filter((status) => status !== 503)).toEqual([]);
    await waitFor('login after Redis restarts', async () => ((await tryLogin()).status === 200 ? true : undefined), RECOVERY_MS);
  }, 30_000);

  it('Redis down at shutdown: the service closes without waiting for Redis to come back, and nothing fails unhandled', async () => {
    await redis.stop();
    // the broker's, the queue's and Socket.IO's connections are reconnecting now
    await expect(current()).resolves.toMatchObject({ status: 503 });
    await t.close();
    closed = true;
  }, 20_000);
});
