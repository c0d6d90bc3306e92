import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { CHROMIUM, describeWithChromium, freePort, collectLog, expectError, login, registerStore, startApp, type RegisteredStore, type TestApp } from './helpers.js';

// Passkeys end to end in a real browser: Debian's Chromium driven by playwright-core, with a
// CDP virtual authenticator (internal transport, resident keys, user verification). The page is
// served on the service's own origin (http://localhost is a secure context) and calls
// navigator.credentials with the options the service gives.

// What the page offers the test: the calls an SPA makes, in plain browser JavaScript.
const PAGE = `<!doctype html><title>passkeys</title><script>
async function call(method, path, headers, body) {
  const res = await fetch(path, { method, credentials: 'include', headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json(), tokenHeader: res.headers.get('svc-access-token-' + headers['svc-store-codename']) };
}
window.enrol = async (codename, token, name) => {
  const h = { 'svc-store-codename': codename, authorization: 'Bearer ' + token };
  const options = await call('POST', '/auth-api/passkeys/register/options', h);
  if (options.status !== 200) return options;
  const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options.body) });
  return call('POST', '/auth-api/passkeys/register/verify', h, { response: credential.toJSON(), name });
};
window.signIn = async (codename) => {
  const h = { 'svc-store-codename': codename };
  const options = await call('POST', '/auth-api/passkeys/login/options', h);
  if (options.status !== 200) return options;
  const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options.body) });
  return { ...(await call('POST', '/auth-api/passkeys/login/verify', h, { response: credential.toJSON() })), credentialId: credential.id };
};
</script>`;

type Answer = { status: number; body: Record<string, any>; tokenHeader?: string | null; credentialId?: string };

describeWithChromium('passkeys in a real browser (Chromium with a virtual authenticator)', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let origin: string;
  const log = collectLog();

  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await startApp({ ...log.logged, env: { LOG_LEVEL: 'warn' }, settings: { webauthn: { rpId: 'localhost', rpName: 'Test', origins: [origin] }, mfaRequiredForRoles: ['tenantOwner'] } });
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(port, '127.0.0.1', resolve));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  // A fresh page and authenticator per test: each test's passkeys are its own.
  beforeEach(async () => {
    await page?.close();
    page = await browser.newPage();
    // The page itself is the test's; every other request of the page goes to the service.
    await page.route(`${origin}/passkeys.html`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: PAGE }));
    await page.goto(`${origin}/passkeys.html`);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
  }, 30_000);

  const enrol = (store: RegisteredStore, token: string, name?: string) => page.evaluate(([c, tk, n]) => (globalThis as any).enrol(c, tk, n), [store.codename, token, name] as const) as Promise<Answer>;
  const signIn = (store: RegisteredStore) => page.evaluate((c) => (globalThis as any).signIn(c), store.codename) as Promise<Answer>;
  // A supertest call to the store with a login's token.
  const as = (store: RegisteredStore, token: string, method: 'get' | 'patch' | 'delete', path: string) => t.http[method](path).set('svc-store-codename', store.codename).set('authorization', `Bearer ${token}`);
  const storedCounter = async (id: string) => Number((await t.app.get(DataSource).query(`SELECT "counter" FROM "passkeys" WHERE "id" = $1`, [id]))[0].counter);

  it('enrols a passkey (the route open to a user who must enrol an app factor), then signs in without a password, twice', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    // tenantOwner must enrol an app factor: other routes are closed to this login until then.
    expectError(await as(store, owner.accessToken, 'get', '/auth-api/sessions'), 403, 'MfaEnrollmentRequired');

    const enrolled = await enrol(store, owner.accessToken, 'Laptop');
    expect(enrolled).toMatchObject({ status: 201, body: { status: 'OK', passkey: { id: expect.any(String), name: 'Laptop', lastUsedAt: null, transports: expect.arrayContaining(['internal']), backedUp: false } } });
    expect(Object.keys(enrolled.body.passkey).sort()).toEqual(['backedUp', 'createdAt', 'id', 'lastUsedAt', 'name', 'transports']);
    const passkeyId = enrolled.body.passkey.id as string;
    // The same login is now past the enrolment gate, with fresh tokens: the ones it had served only to enrol.
    expect(enrolled.body.session).toMatchObject({ sessionId: owner.sessionId, accessToken: expect.stringMatching(/^eyJ/) });
    expectError(await as(store, owner.accessToken, 'get', '/auth-api/sessions'), 401, 'AccessTokenPending');
    const enrolledToken = enrolled.body.session.accessToken as string;
    await as(store, enrolledToken, 'get', '/auth-api/sessions').expect(200);
    const list = await as(store, enrolledToken, 'get', '/auth-api/passkeys').expect(200);
    expect(list.body.passkeys).toEqual([enrolled.body.passkey]);

    // Sign in with no username or password: the authenticator offers its resident credential.
    const first = await signIn(store);
    expect(first).toMatchObject({ status: 200, body: { userId: store.ownerId, tenantId: store.storeId, accessToken: expect.stringMatching(/^eyJ/) } });
    expect(first.tokenHeader).toBe(first.body.accessToken);
    const me = await as(store, first.body.accessToken, 'get', '/auth-api/currentuser').expect(200);
    expect(me.body).toMatchObject({ userId: store.ownerId, email: store.ownerEmail });
    // Multi-factor by itself: no second factor pending, and past the enrolment gate.
    expect(me.body.sessionNeedsEmail2FA).toBeFalsy();
    expect(me.body.sessionNeedsTotp2FA).toBeFalsy();
    await as(store, first.body.accessToken, 'get', '/auth-api/sessions').expect(200);
    // The browser got the session cookie too, as with /login: the page's own calls are logged in.
    const fromPage = await page.evaluate((c) => fetch('/auth-api/currentuser', { headers: { 'svc-store-codename': c } }).then((r) => r.status), store.codename);
    expect(fromPage).toBe(200);

    const counterAfterFirst = await storedCounter(passkeyId);
    const second = await signIn(store);
    expect(second.status).toBe(200);
    expect(second.body.sessionId).not.toBe(first.body.sessionId);
    expect(await storedCounter(passkeyId)).toBeGreaterThan(counterAfterFirst);
    const again = await as(store, second.body.accessToken, 'get', '/auth-api/passkeys').expect(200);
    expect(again.body.passkeys[0].lastUsedAt).toEqual(expect.any(String));

    // The audit log names the proof of each login.
    await t.app.get(AuditRecorderService).flush();
    const logins = await as(store, second.body.accessToken, 'get', '/auth-api/v1/auditlogs?action=user.login.succeeded').expect(200);
    const bySession = new Map((logins.body.auditLogs as { sessionId: string; details: { method: string } }[]).map((e) => [e.sessionId, e.details.method]));
    expect([bySession.get(first.body.sessionId), bySession.get(second.body.sessionId)]).toEqual(['passkey', 'passkey']);
  }, 60_000);

  it('refuses the passkey in another store', async () => {
    const store = await registerStore(t.http);
    const other = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    expect((await enrol(store, owner.accessToken)).status).toBe(201);
    const answer = await signIn(other);
    expect(answer.status).toBe(404);
    expect(answer.body.errCode).toBe('PasskeyNotFound');
    expect(answer.body.accessToken).toBeUndefined();
  }, 60_000);

  it('refuses a deleted passkey, and the user must enrol again', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    const enrolled = await enrol(store, owner.accessToken);
    expect(enrolled.status).toBe(201);
    const token = enrolled.body.session.accessToken as string;
    const renamed = await as(store, token, 'patch', `/auth-api/passkeys/${enrolled.body.passkey.id}`).send({ name: 'Old phone' }).expect(200);
    expect(renamed.body.passkey).toMatchObject({ id: enrolled.body.passkey.id, name: 'Old phone' });
    await as(store, token, 'delete', `/auth-api/passkeys/${enrolled.body.passkey.id}`).expect(200, { status: 'OK', id: enrolled.body.passkey.id });
    // The authenticator still holds it and offers it; the service no longer knows it.
    const answer = await signIn(store);
    expect(answer.status).toBe(404);
    expect(answer.body.errCode).toBe('PasskeyNotFound');
    // No passkey left: the role's app factor is missing again.
    expectError(await as(store, token, 'get', '/auth-api/sessions'), 403, 'MfaEnrollmentRequired');

    // Both are in the store's audit log: by the owner, the passkey named, the enrolment with the browser's user agent.
    await t.app.get(AuditRecorderService).flush();
    const recorded = await t.app
      .get(DataSource)
      .query(`SELECT "action", "actorId", "targetId", "details", "userAgent", "sessionId" FROM "audit_log" WHERE "storeId" = $1 AND "action" LIKE 'user.factor.%' ORDER BY "seq"`, [store.storeId]);
    const passkeyId = enrolled.body.passkey.id as string;
    expect(recorded).toEqual([
      { action: 'user.factor.enrolled', actorId: store.ownerId, targetId: store.ownerId, details: { factor: 'passkey', passkeyId }, userAgent: expect.stringMatching(/Chrome/), sessionId: owner.sessionId },
      { action: 'user.factor.removed', actorId: store.ownerId, targetId: store.ownerId, details: { factor: 'passkey', passkeyId }, userAgent: null, sessionId: owner.sessionId }, // deleted by a client that sends no user agent
    ]);
    expect(JSON.stringify(recorded)).not.toContain(enrolled.body.passkey.credentialId ?? 'no credential id in the answer');
  }, 60_000);

  it('refuses enrolling the same authenticator twice for a user (its passkey is excluded)', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    const token = (await enrol(store, owner.accessToken)).body.session.accessToken as string;
    // The browser refuses to create a credential on an authenticator holding an excluded one.
    const error = await enrol(store, token).then(() => undefined, (e: Error) => e.message);
    expect(error).toMatch(/InvalidStateError|excluded|already/i);
    expect((await as(store, token, 'get', '/auth-api/passkeys')).body.passkeys).toHaveLength(1);
  }, 60_000);

  it('refuses, and logs, a signature counter that went backwards (a cloned authenticator)', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    const enrolled = await enrol(store, owner.accessToken);
    expect((await signIn(store)).status).toBe(200);
    // As if a copy of the authenticator had signed in many times meanwhile.
    await t.app.get(DataSource).query(`UPDATE "passkeys" SET "counter" = 1000 WHERE "id" = $1`, [enrolled.body.passkey.id]);
    const from = log.mark();
    const answer = await signIn(store);
    expect(answer.status).toBe(400);
    expect(answer.body.errCode).toBe('PasskeyVerificationFailed');
    expect(log.since(from).filter((l) => l.level === 40 && /counter/.test(l.msg ?? ''))).toEqual([expect.objectContaining({ passkeyId: enrolled.body.passkey.id, stored: 1000 })]);
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
  }, 60_000);
});
