import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, type Login, type RegisteredStore, type TestApp } from './helpers.js';
import { PrivatePostgres, PrivateRedis, privateServersAvailable } from './private-servers.js';

// A run that provokes each kind of error the service logs (database errors on the writes that
// carry password and key hashes, PostgreSQL and Redis outages, refused credentials in headers and
// query strings), with every log line captured at the most verbose level; then the log is
// searched for passwords, hashes, tokens and keys. The database is the test's own, so it can be
// made to refuse writes.

const HEADER = 'svc-store-codename';
const KEY_ENCRYPTION_SECRET = 'log-test-encryption-secret-0123456789';
const NEW_PASSWORD = 'a brand new password';
const OTHER_PASSWORD = 'another user password';
// Writes with this value violate the constraints the test adds.
const REFUSED = 'Refused By Test';

const describeWithServers = privateServersAvailable ? describe : describe.skip;

describeWithServers('nothing secret in the log (needs PostgreSQL binaries in /usr/lib/postgresql/15/bin or PG_BIN, and redis-server)', () => {
  let pgServer: PrivatePostgres;
  let redis: PrivateRedis;
  let t: TestApp;
  let store: RegisteredStore;
  let session: Login;
  let apiKey: string;
  const lines: string[] = [];

  beforeAll(async () => {
    [pgServer, redis] = await Promise.all([PrivatePostgres.start(), PrivateRedis.start()]);
    t = await startApp({
      env: { DATABASE_URL: pgServer.url, REDIS_URL: redis.url, LOG_LEVEL: 'trace', KEY_ENCRYPTION_SECRET },
      logStream: { write: (line: string) => void lines.push(line) },
    });
    store = await registerStore(t.http);
    session = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const created = await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', `Bearer ${session.accessToken}`).send({ name: 'logged' }).expect(201);
    apiKey = created.body.apiKey.key;

    const db = new pg.Client({ connectionString: pgServer.url });
    await db.connect();
    try {
      await db.query(`ALTER TABLE "users" ADD CONSTRAINT "log_test_users" CHECK ("fullname" IS DISTINCT FROM '${REFUSED}') NOT VALID`);
      await db.query(`ALTER TABLE "api_keys" ADD CONSTRAINT "log_test_api_keys" CHECK ("name" <> '${REFUSED}') NOT VALID`);
      await db.query(`ALTER TABLE "sessions" ADD CONSTRAINT "log_test_sessions" CHECK ("userAgent" IS DISTINCT FROM '${REFUSED}') NOT VALID`);
    } finally {
      await db.end();
    }
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await redis?.stop();
    pgServer?.destroy();
  });

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}`, [HEADER]: store.codename });

  it('a failed update with a new password (its hash among the parameters) → 500, logged without the hash', async () => {
    const res = await t.http.patch(`/auth-api/v1/users/${store.ownerId}`).set(bearer(session.accessToken)).send({ fullname: REFUSED, password: NEW_PASSWORD, currentPassword: PASSWORD });
    expect(res.status).toBe(500);
    expect(lines.join('')).toContain('log_test_users');
  });

  it('a failed registration, key creation and session creation → 500 each, logged', async () => {
    expect((await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email: uniqueEmail(), password: OTHER_PASSWORD, fullname: REFUSED })).status).toBe(500);
    expect((await t.http.post('/auth-api/v1/apikeys').set(bearer(session.accessToken)).send({ name: REFUSED })).status).toBe(500);
    expect((await t.http.post('/auth-api/login').set(HEADER, store.codename).set('User-Agent', REFUSED).send({ username: store.ownerEmail, password: PASSWORD })).status).toBe(500);
    const log = lines.join('');
    for (const constraint of ['log_test_api_keys', 'log_test_sessions']) expect(log).toContain(constraint);
  });

  it('credentials refused or sent in query strings and headers are not logged', async () => {
    await t.http.get(`/auth-api/currentuser?access_token=${session.accessToken}`).set(HEADER, store.codename).expect(200);
    await t.http.get(`/auth-api/v1/users?apiKey=${apiKey}`).set(HEADER, store.codename);
    await t.http.get('/auth-api/v1/users').set('Authorization', `Bearer ${apiKey}`).expect(200);
    await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: store.ownerEmail, password: 'a wrong password' }).expect(401);
    await t.http.post('/auth-api/validateapikey').set('svc-machine-token', session.accessToken).send({ apiKey }).expect(401);
  });

  it('requests during a Redis outage, then a PostgreSQL outage → 503, logged', async () => {
    await redis.stop();
    expect((await t.http.get('/auth-api/currentuser').set(bearer(session.accessToken))).status).toBe(503);
    expect((await t.http.get('/auth-api/v1/users').set('Authorization', `Bearer ${apiKey}`)).status).toBe(503);
    await redis.resume();
    pgServer.stop();
    expect((await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: store.ownerEmail, password: PASSWORD })).status).toBe(503);
    expect((await t.http.get('/auth-api/v1/users').set(bearer(session.accessToken))).status).toBe(503);
    pgServer.resume();
    expect(lines.join('')).toContain('dependency unavailable');
  });

  it('the whole log holds no password, bcrypt hash, token, API key or key hash, nor the encryption secret', () => {
    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(20);
    const secrets = {
      password: PASSWORD,
      newPassword: NEW_PASSWORD,
      otherPassword: OTHER_PASSWORD,
      accessToken: session.accessToken,
      bucketToken: session.userBucketToken,
      apiKey,
      apiKeyHash: createHash('sha256').update(apiKey).digest('hex'),
      encryptionSecret: KEY_ENCRYPTION_SECRET,
    };
    const found = Object.entries(secrets).filter(([, secret]) => log.includes(secret)).map(([name]) => name);
    const patterns = {
      bcryptHash: /\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}/,
      sha256Hex: /\b[0-9a-f]{64}\b/, // the hash of the key whose insert failed, unknown here
      jwt: /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/,
      apiKeyShape: /sk_svc_[0-9a-f]{8}/,
      privateKey: /PRIVATE KEY/,
    };
    const matched = Object.entries(patterns).filter(([, pattern]) => pattern.test(log)).map(([name]) => name);
    expect({ found, matched }).toEqual({ found: [], matched: [] });
  });
});
