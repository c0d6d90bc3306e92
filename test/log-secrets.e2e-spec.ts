import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { describeIf, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, waitFor, type Login, type RegisteredStore, type TestApp } from './helpers.js';
import { smtp, startMailServer, type MailServer } from './mail-server.js';
import { followRedirects, startOAuthServer, type OAuthPeer } from './oauth-peers.js';
import { PrivatePostgres, PrivateRedis, privateServersAvailable } from './private-servers.js';

// A run that provokes each kind of error the service logs (database errors on the writes that
// carry password and key hashes, PostgreSQL and Redis outages, refused credentials in headers and
// query strings), and that runs verification flows (codes and links through the notification
// queue to a real SMTP server) and a social login, with every log line captured at the most
// verbose level; then the log is searched for passwords, hashes, tokens, keys and codes. The
// database is the test's own, so it can be made to refuse writes.

const HEADER = 'svc-store-codename';
const KEY_ENCRYPTION_SECRET = 'log-test-encryption-secret-0123456789';
const NEW_PASSWORD = 'a brand new password';
const OTHER_PASSWORD = 'another user password';
const RESET_PASSWORD = 'a password set by reset';
const GITLAB_SECRET = 'log-test-gitlab-client-secret';
const FRONTEND = 'http://127.0.0.1:9/app';
const V = '/auth-api/verification-services';
// Writes with this value violate the constraints the test adds.
const REFUSED = 'Refused By Test';

const describeWithServers = describeIf(privateServersAvailable, 'needs PostgreSQL binaries in /usr/lib/postgresql/15/bin or PG_BIN, and redis-server');

describeWithServers('nothing secret in the log', () => {
  let pgServer: PrivatePostgres;
  let redis: PrivateRedis;
  let t: TestApp;
  let store: RegisteredStore;
  let session: Login;
  let apiKey: string;
  let mail: MailServer;
  let gitlab: OAuthPeer;
  let base: string;
  const lines: string[] = [];
  // Codes, link tokens and socialCodes the flows below handed out.
  const codes: Record<string, string> = {};

  beforeAll(async () => {
    [pgServer, redis, mail, gitlab] = await Promise.all([PrivatePostgres.start(), PrivateRedis.start(), startMailServer(), startOAuthServer()]);
    t = await startApp({
      env: { DATABASE_URL: pgServer.url, REDIS_URL: redis.url, LOG_LEVEL: 'trace', KEY_ENCRYPTION_SECRET, FRONTEND_URL: FRONTEND, GITLAB_SECRET },
      logStream: { write: (line: string) => void lines.push(line) },
      settings: {
        // testMode answers the code; with a mail channel it is also sent, through the queue
        verification: {
          verificationMode: 'testMode',
          flows: { 'email-verification': { enabled: true, verificationType: 'byLink' }, 'password-reset-by-email': { enabled: true } },
        },
        notifications: {
          providers: [smtp('mail', mail.port)],
          channels: [
            { channelName: 'email', providers: ['mail'], fallbackProviders: [] },
            { channelName: 'inApp', providers: [], fallbackProviders: [] },
          ],
        },
        socialLogin: {
          providers: {
            gitlab: { enabled: true, clientId: 'gitlab-client', clientSecret: { env: 'GITLAB_SECRET' }, authorizationUrl: `${gitlab.url}/authorize`, tokenUrl: `${gitlab.url}/token`, profileUrl: `${gitlab.url}/userinfo` },
          },
        },
      },
    });
    // the social login's redirects need a real address
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
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
    await Promise.all([mail?.close(), gitlab?.close()]);
  }, 60_000); // closing waits for connections to the private servers to settle: slow on a loaded machine (as in outages)

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

  it('verification by link and password reset by code, each mailed through the queue, then completed', async () => {
    const email = uniqueEmail();
    await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: OTHER_PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
    const verify = async (flow: string, body: object) => (await t.http.post(`${V}/${flow}/start`).set(HEADER, store.codename).send(body).expect(200)).body.secretCode as string;

    codes.linkToken = await verify('email-verification', { email });
    await waitFor('the verification mail', () => mail.to(email).find((r) => (r.mail.html || '').includes(codes.linkToken)));
    await t.http.post(`${V}/email-verification/complete`).set(HEADER, store.codename).send({ secretCode: codes.linkToken }).expect(200);
    // a used link, refused: logged as a client error
    expect((await t.http.post(`${V}/email-verification/complete`).set(HEADER, store.codename).send({ secretCode: codes.linkToken })).status).toBe(403);

    codes.resetCode = await verify('password-reset-by-email', { email });
    await waitFor('the reset mail', () => mail.to(email).find((r) => (r.mail.text ?? '').includes(codes.resetCode)));
    const wrong = codes.resetCode === '000000' ? '000001' : '000000';
    expect((await t.http.post(`${V}/password-reset-by-email/complete`).set(HEADER, store.codename).send({ email, secretCode: wrong, password: RESET_PASSWORD })).status).toBe(403);
    await t.http.post(`${V}/password-reset-by-email/complete`).set(HEADER, store.codename).send({ email, secretCode: codes.resetCode, password: RESET_PASSWORD }).expect(200);
    await login(t.http, email, RESET_PASSWORD, store.codename);
  });

  it('a social login: the provider\'s code comes back to the service, socialCodes go to the client and back', async () => {
    gitlab.profile = { id: unique('id'), username: 'fay', name: 'Fay Book', email: uniqueEmail(), confirmed_at: '2024-01-01T00:00:00Z' };
    // stop at the service's callback to read the provider's authorization code
    const callback = await followRedirects(`${base}/auth-api/auth/gitlab?_store=${store.codename}`, `${base}/auth-api/auth/gitlab/callback`);
    codes.providerCode = callback.searchParams.get('code')!;
    const landed = await followRedirects(callback.toString(), FRONTEND);
    codes.socialCode = landed.searchParams.get('socialCode')!;
    const needed = await t.http.post('/auth-api/auth/social-login-result').set(HEADER, store.codename).send({ socialCode: codes.socialCode }).expect(200);
    expect(needed.body.type).toBe('RegisterNeededForSocialLogin');
    codes.registerSocialCode = needed.body.socialCode;
    await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ socialCode: codes.registerSocialCode }).expect(201);
    // a used socialCode, refused
    expect((await t.http.post('/auth-api/auth/social-login-result').set(HEADER, store.codename).send({ socialCode: codes.socialCode })).status).toBe(400);
    expect(Object.values(codes).every(Boolean)).toBe(true);
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

  it('the whole log holds no password, bcrypt hash, token, API key or key hash, verification code or link, socialCode or provider code, nor the encryption secret', () => {
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
      resetPassword: RESET_PASSWORD,
      gitlabSecret: GITLAB_SECRET,
      ...codes,
    };
    // the flows ran, and were logged
    for (const route of ['/email-verification/complete', '/password-reset-by-email/complete', '/auth/gitlab/callback', '/social-login-result']) expect(log).toContain(route);
    // a six-digit code only as a number of its own (timestamps hold any six digits)
    const standalone = (secret: string) => new RegExp(`(?<![0-9A-Za-z])${secret.replace(/[^\w]/g, '\\$&')}(?![0-9A-Za-z])`);
    const found = Object.entries(secrets).filter(([name, secret]) => (name === 'resetCode' ? standalone(secret).test(log) : log.includes(secret))).map(([name]) => name);
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
