import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { codeAt, TOTP_STEP_MS, wrongCode } from './totp-codes.js';
import { DataSource } from 'typeorm';
import { ManualClock } from '../src/platform/clock/clock.js';
import { MfaService } from '../src/identity/mfa/mfa.service.js';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { describeWithRedis, expectError, login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// Authenticator apps (TOTP) and recovery codes end to end: the codes are computed here from the
// secret the setup returns, on a clock the test moves (30 s steps).

const HEADER = 'svc-store-codename';
const MFA = '/auth-api/mfa';
const STEP = TOTP_STEP_MS;



function as(t: TestApp, codename: string, token: string) {
  return {
    get: (path: string) => t.http.get(path).set(HEADER, codename).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object = {}) => t.http.post(path).set(HEADER, codename).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string, body: object = {}) => t.http.delete(path).set(HEADER, codename).set('Authorization', `Bearer ${token}`).send(body),
  };
}

interface Enrolled {
  store: RegisteredStore;
  email: string;
  secret: string;
  recoveryCodes: string[];
}

// A user (the store's owner, or a new tenantUser) with an authenticator app; the clock moves past
// the confirming code's step.
async function enrolled(t: TestApp, clock: ManualClock, opts: { store?: RegisteredStore } = {}): Promise<Enrolled> {
  let store = opts.store;
  let email: string;
  if (store) {
    email = uniqueEmail();
    await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
  } else {
    store = await registerStore(t.http);
    email = store.ownerEmail;
  }
  const session = await login(t.http, email, PASSWORD, store.codename);
  const api = as(t, store.codename, session.accessToken);
  const setup = await api.post(`${MFA}/totp/setup`).expect(200);
  const confirm = await api.post(`${MFA}/totp/confirm`, { code: codeAt(setup.body.secret, clock) }).expect(200);
  clock.advance(STEP);
  return { store, email, secret: setup.body.secret, recoveryCodes: confirm.body.recoveryCodes };
}

async function pendingLogin(t: TestApp, u: Enrolled) {
  const session = await login(t.http, u.email, PASSWORD, u.store.codename);
  expect(session.body.sessionNeedsTotp2FA).toBe(true);
  return as(t, u.store.codename, session.accessToken);
}

describe('authenticator apps (TOTP)', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({ clock });
  });
  afterAll(() => t.close());

  it('enrols an app, makes the next login pending until a code completes it', async () => {
    const store = await registerStore(t.http);
    const first = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const api = as(t, store.codename, first.accessToken);
    expect((await api.get(MFA).expect(200)).body).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });

    const setup = await api.post(`${MFA}/totp/setup`).expect(200);
    expect(Object.keys(setup.body).sort()).toEqual(['otpauthUrl', 'qrCodeSvg', 'secret']);
    // 160 bits: 32 base32 characters
    expect(setup.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setup.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/.+\?.*secret=/);
    expect(setup.body.otpauthUrl).toContain('digits=6');
    expect(setup.body.otpauthUrl).toContain('period=30');
    expect(setup.body.qrCodeSvg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    // pending: the login is not yet pending, nothing enabled
    expect((await api.get(MFA).expect(200)).body.totp).toBe(false);
    expectError(await api.post(`${MFA}/totp/confirm`, { code: wrongCode(setup.body.secret, clock) }), 403, 'TotpCodeInvalid');

    const confirm = await api.post(`${MFA}/totp/confirm`, { code: codeAt(setup.body.secret, clock) }).expect(200);
    expect(confirm.body.status).toBe('OK');
    expect(confirm.body.recoveryCodes).toHaveLength(10);
    expect(new Set(confirm.body.recoveryCodes).size).toBe(10);
    for (const c of confirm.body.recoveryCodes) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
    const factors = await api.get(MFA).expect(200);
    expect(factors.body).toEqual({ totp: true, passkeys: 0, recoveryCodesLeft: 10 });
    expect(JSON.stringify(factors.body)).not.toContain(setup.body.secret);
    expectError(await api.post(`${MFA}/totp/setup`), 409, 'TotpAlreadyEnabled');
    expectError(await api.post(`${MFA}/totp/confirm`, { code: codeAt(setup.body.secret, clock) }), 409, 'TotpAlreadyEnabled');
    clock.advance(STEP);

    const pending = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect(pending.body).toMatchObject({ sessionNeedsTotp2FA: true });
    const p = as(t, store.codename, pending.accessToken);
    const refused = await p.get('/auth-api/sessions');
    expect({ status: refused.status, body: refused.body }).toMatchObject({
      status: 403,
      body: { result: 'ERR', status: 403, errCode: 'TotpTwoFactorNeeded', message: 'errMsg_getSessionsRequiresTotp2FA' },
    });
    expect((await p.get('/auth-api/currentuser').expect(200)).body).toMatchObject({ sessionId: pending.sessionId, sessionNeedsTotp2FA: true });
    expectError(await p.post(`${MFA}/totp/verify`, { code: wrongCode(setup.body.secret, clock) }), 403, 'TotpCodeInvalid');
    expectError(await p.post(`${MFA}/totp/verify`, { code: 'abcdef' }), 400, 'ValidationFailed');

    const done = await p.post(`${MFA}/totp/verify`, { code: codeAt(setup.body.secret, clock) }).expect(200);
    expect(done.body).toMatchObject({ sessionId: pending.sessionId, accessToken: expect.any(String), userBucketToken: expect.any(String) });
    expect(done.body.sessionNeedsTotp2FA).toBeUndefined();
    // the pending sign-in's token finished it and serves nothing else; the answer's token does
    expectError(await p.get('/auth-api/sessions'), 401, 'AccessTokenPending');
    await as(t, store.codename, done.body.accessToken).get('/auth-api/sessions').expect(200);
    // the session that enabled the app goes on
    await api.get('/auth-api/sessions').expect(200);
    // nothing pending any more
    expectError(await p.post(`${MFA}/totp/verify`, { code: codeAt(setup.body.secret, clock) }), 409, 'SecondFactorNotPending');
  });

  it('refuses a code used once, on the next sign-in too', async () => {
    const u = await enrolled(t, clock);
    const code = codeAt(u.secret, clock);
    await (await pendingLogin(t, u)).post(`${MFA}/totp/verify`, { code }).expect(200);
    const again = await pendingLogin(t, u);
    expectError(await again.post(`${MFA}/totp/verify`, { code }), 403, 'TotpCodeInvalid');
    clock.advance(STEP);
    await again.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }).expect(200);
  });

  it('accepts one step of drift either way, not two', async () => {
    const u = await enrolled(t, clock);
    clock.advance(2 * STEP); // the step before this one is past the confirming code's
    const p = await pendingLogin(t, u);
    expectError(await p.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock, -2) }), 403, 'TotpCodeInvalid');
    expectError(await p.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock, 2) }), 403, 'TotpCodeInvalid');
    await p.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock, -1) }).expect(200);
    clock.advance(3 * STEP);
    await (await pendingLogin(t, u)).post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock, 1) }).expect(200);
    clock.advance(3 * STEP);
  });

  it('evaluates at most 5 of 50 parallel wrong codes, then ends the sign-in', async () => {
    const u = await enrolled(t, clock);
    const session = await login(t.http, u.email, PASSWORD, u.store.codename);
    const p = as(t, u.store.codename, session.accessToken);
    const wrong = wrongCode(u.secret, clock);
    const answers = await Promise.all(Array.from({ length: 50 }, () => p.post(`${MFA}/totp/verify`, { code: wrong })));
    const evaluated = answers.filter((r) => r.status === 403);
    for (const r of evaluated) expect(r.body.errCode).toBe('TotpCodeInvalid');
    expect(evaluated.length).toBeGreaterThan(0);
    expect(evaluated.length).toBeLessThanOrEqual(5);
    // the others were not evaluated: refused by the limit, before and after the sign-in ended
    const limited = answers.filter((r) => r.status === 429);
    expect(evaluated.length + limited.length).toBe(50);
    for (const r of limited) expectError(r, 429, 'TotpAttemptsExceeded');
    // the sign-in has ended: its token is no longer a login, and a further try, the right code
    // included, still answers 429
    expect((await p.get('/auth-api/currentuser').expect(401)).body).toEqual({ status: 'ERR', message: 'No login found' });
    expectError(await p.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }), 429, 'TotpAttemptsExceeded');
    expectError(await p.post(`${MFA}/recovery`, { code: 'aaaa-bbbb-cccc' }), 429, 'TotpAttemptsExceeded');
  });

  it('records the wrong code that ends the sign-in with the end itself, in its transaction; the refusals before it are queued', async () => {
    const u = await enrolled(t, clock);
    const session = await login(t.http, u.email, PASSWORD, u.store.codename);
    const p = as(t, u.store.codename, session.accessToken);
    const wrong = wrongCode(u.secret, clock);
    // The queue held: only entries written in a change's transaction reach the table.
    const audit = t.app.get(AuditRecorderService);
    const flush = audit.flush.bind(audit);
    audit.flush = async () => undefined;
    try {
      for (let i = 0; i < 4; i++) expectError(await p.post(`${MFA}/totp/verify`, { code: wrong }), 403, 'TotpCodeInvalid');
      const last = await p.post(`${MFA}/totp/verify`, { code: wrong });
      expectError(last, 403, 'TotpCodeInvalid');
      expect(last.body.detail).toMatch(/sign-in has ended/);
      const written = await t.app.get(DataSource).query(`SELECT "reason", "targetId", "details" FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'user.2fa.failed'`, [u.store.storeId]);
      expect(written).toEqual([{ reason: 'wrong_code', targetId: session.sessionId, details: { factor: 'totp', signInEnded: true } }]);
    } finally {
      audit.flush = flush;
      await audit.flush();
    }
    const all = await t.app.get(DataSource).query(`SELECT "details" FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'user.2fa.failed'`, [u.store.storeId]);
    expect(all).toHaveLength(5);
    await p.get('/auth-api/currentuser').expect(401);
  });

  it('takes each recovery code once in place of the app', async () => {
    const u = await enrolled(t, clock);
    const [first, second] = u.recoveryCodes;
    const p = await pendingLogin(t, u);
    expectError(await p.post(`${MFA}/recovery`, { code: 'zzzz-zzzz-zzzz' }), 403, 'TotpCodeInvalid');
    const done = await p.post(`${MFA}/recovery`, { code: first }).expect(200);
    expect(done.body.sessionNeedsTotp2FA).toBeUndefined();
    await as(t, u.store.codename, done.body.accessToken).get('/auth-api/sessions').expect(200);

    const again = await pendingLogin(t, u);
    expectError(await again.post(`${MFA}/recovery`, { code: first }), 403, 'TotpCodeInvalid');
    // dashes and case do not matter
    await again.post(`${MFA}/recovery`, { code: ` ${second.replace(/-/g, '').toUpperCase()} ` }).expect(200);
    expect((await again.get(MFA).expect(200)).body.recoveryCodesLeft).toBe(8);
    // two sign-ins racing with one code: one gets through
    const [a, b] = [await pendingLogin(t, u), await pendingLogin(t, u)];
    const raced = await Promise.all([a.post(`${MFA}/recovery`, { code: u.recoveryCodes[2] }), b.post(`${MFA}/recovery`, { code: u.recoveryCodes[2] })]);
    expect(raced.map((r) => r.status).sort()).toEqual([200, 403]);
  });

  it('replaces the recovery codes against a current code', async () => {
    const u = await enrolled(t, clock);
    const pending = await pendingLogin(t, u);
    const p = as(t, u.store.codename, (await pending.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }).expect(200)).body.accessToken);
    // the code just used does not work twice
    expectError(await p.post(`${MFA}/recovery/regenerate`, { code: codeAt(u.secret, clock) }), 403, 'TotpCodeInvalid');
    clock.advance(STEP);
    const res = await p.post(`${MFA}/recovery/regenerate`, { code: codeAt(u.secret, clock) }).expect(200);
    expect(res.body.recoveryCodes).toHaveLength(10);
    clock.advance(STEP);
    const next = await pendingLogin(t, u);
    expectError(await next.post(`${MFA}/recovery`, { code: u.recoveryCodes[0] }), 403, 'TotpCodeInvalid');
    await next.post(`${MFA}/recovery`, { code: res.body.recoveryCodes[0] }).expect(200);
  });

  it('disables the app with a current code or the password', async () => {
    const byCode = await enrolled(t, clock);
    const a = as(t, byCode.store.codename, (await (await pendingLogin(t, byCode)).post(`${MFA}/totp/verify`, { code: codeAt(byCode.secret, clock) }).expect(200)).body.accessToken);
    clock.advance(STEP);
    expectError(await a.delete(`${MFA}/totp`, {}), 400, 'MfaCredentialMissing');
    expectError(await a.delete(`${MFA}/totp`, { code: wrongCode(byCode.secret, clock) }), 403, 'TotpCodeInvalid');
    await a.delete(`${MFA}/totp`, { code: codeAt(byCode.secret, clock) }).expect(200);
    expect((await a.get(MFA).expect(200)).body).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });
    const plain = await login(t.http, byCode.email, PASSWORD, byCode.store.codename);
    expect(plain.body.sessionNeedsTotp2FA).toBeUndefined();

    const byPassword = await enrolled(t, clock);
    const b = await pendingLogin(t, byPassword);
    // a pending sign-in cannot remove the factor it has not passed
    expectError(await b.delete(`${MFA}/totp`, { password: PASSWORD }), 403, 'TotpTwoFactorNeeded');
    const passed = as(t, byPassword.store.codename, (await b.post(`${MFA}/recovery`, { code: byPassword.recoveryCodes[0] }).expect(200)).body.accessToken);
    expectError(await passed.delete(`${MFA}/totp`, { password: 'not the password' }), 403, 'TotpCodeInvalid');
    await passed.delete(`${MFA}/totp`, { password: PASSWORD }).expect(200);
    expect((await login(t.http, byPassword.email, PASSWORD, byPassword.store.codename)).body.sessionNeedsTotp2FA).toBeUndefined();
  });

  it("does not complete a sign-in from another store, nor with another user's codes", async () => {
    const u = await enrolled(t, clock);
    const other = await enrolled(t, clock);
    const session = await login(t.http, u.email, PASSWORD, u.store.codename);
    // the token sent to another store is refused there
    const elsewhere = as(t, other.store.codename, session.accessToken);
    expectError(await elsewhere.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }), 403, 'TenantMismatch');
    const p = as(t, u.store.codename, session.accessToken);
    expectError(await p.post(`${MFA}/totp/verify`, { code: codeAt(other.secret, clock) }), 403, 'TotpCodeInvalid');
    expectError(await p.post(`${MFA}/recovery`, { code: other.recoveryCodes[0] }), 403, 'TotpCodeInvalid');
    // without the session's token there is nothing to complete
    expectError(await t.http.post(`${MFA}/totp/verify`).set(HEADER, u.store.codename).send({ code: codeAt(u.secret, clock) }), 401, 'Unauthorized');
    await p.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }).expect(200);
  });

  it('lets an administrator reset a user\'s factors, which ends its sessions', async () => {
    const u = await enrolled(t, clock, { store: await registerStore(t.http) });
    const owner = await login(t.http, u.store.ownerEmail, PASSWORD, u.store.codename);
    const admin = as(t, u.store.codename, owner.accessToken);
    const p = as(t, u.store.codename, (await (await pendingLogin(t, u)).post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }).expect(200)).body.accessToken);
    const userId = (await p.get('/auth-api/currentuser').expect(200)).body.userId as string;

    // a user is no administrator, and nobody resets its own
    expectError(await p.delete(`/auth-api/v1/users/${u.store.ownerId}/mfa`), 403, 'Forbidden');
    expectError(await admin.delete(`/auth-api/v1/users/${u.store.ownerId}/mfa`), 403, 'Forbidden');

    const res = await admin.delete(`/auth-api/v1/users/${userId}/mfa`).expect(200);
    expect(res.body).toEqual({ status: 'OK', ended: expect.any(Number) });
    expect(res.body.ended).toBeGreaterThanOrEqual(2);
    expect((await p.get('/auth-api/currentuser').expect(401)).body).toEqual({ status: 'ERR', message: 'No login found' });
    const fresh = await login(t.http, u.email, PASSWORD, u.store.codename);
    expect(fresh.body.sessionNeedsTotp2FA).toBeUndefined();
    expect((await as(t, u.store.codename, fresh.accessToken).get(MFA).expect(200)).body).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });
  });
});

describe('mfaRequiredForRoles', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({ clock, settings: { mfaRequiredForRoles: ['tenantOwner'] } });
  });
  afterAll(() => t.close());

  it('keeps a tenant owner without an app factor to the enrolment routes until it enrols', async () => {
    const store = await registerStore(t.http);
    const session = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect(session.body.mfaEnrollmentNeeded).toBe(true);
    const api = as(t, store.codename, session.accessToken);
    expectError(await api.get('/auth-api/sessions'), 403, 'MfaEnrollmentRequired');
    expectError(await api.get(`/auth-api/v1/users/${store.ownerId}`), 403, 'MfaEnrollmentRequired');
    expect((await api.get('/auth-api/currentuser').expect(200)).body.mfaEnrollmentNeeded).toBe(true);
    await api.get(MFA).expect(200);
    const setup = await api.post(`${MFA}/totp/setup`).expect(200);
    const confirmed = await api.post(`${MFA}/totp/confirm`, { code: codeAt(setup.body.secret, clock) }).expect(200);
    // the same session goes on, enrolled, with fresh tokens: those it had served only to enrol
    expect(confirmed.body.session).toMatchObject({ sessionId: session.sessionId, accessToken: expect.any(String) });
    expect(confirmed.body.session.mfaEnrollmentNeeded).toBeUndefined();
    expectError(await api.get('/auth-api/sessions'), 401, 'AccessTokenPending');
    const enrolled = as(t, store.codename, confirmed.body.session.accessToken);
    await enrolled.get('/auth-api/sessions').expect(200);
    expect((await enrolled.get('/auth-api/currentuser').expect(200)).body.mfaEnrollmentNeeded).toBeUndefined();

    // a tenant user is not asked
    const email = uniqueEmail();
    await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
    const user = await login(t.http, email, PASSWORD, store.codename);
    expect(user.body.mfaEnrollmentNeeded).toBeUndefined();
    await as(t, store.codename, user.accessToken).get('/auth-api/sessions').expect(200);
    await enrolled.post('/auth-api/logout').expect(200);
  });

  it('refuses to boot on a role nobody has', async () => {
    await expect(startApp({ settings: { mfaRequiredForRoles: ['tenantOwner', 'tenantOwnr'] } })).rejects.toThrow(/mfaRequiredForRoles: no role "tenantOwnr"/);
  });
});

describe('authenticator apps with KEY_ENCRYPTION_SECRET and refresh tokens', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({ clock, env: { KEY_ENCRYPTION_SECRET: 'totp-test-key-encryption-secret' }, settings: { accessTokenMinutes: 5 } });
  });
  afterAll(() => t.close());

  it('stores the secret encrypted and answers a completed sign-in with a fresh pair', async () => {
    const u = await enrolled(t, clock);
    const [row] = (await t.app.get(DataSource).query('SELECT f."secret" FROM "totp_factors" f JOIN "users" u ON u."id" = f."userId" WHERE u."email" = $1', [u.email])) as { secret: string }[];
    expect(row.secret).toMatch(/^enc:v1:/);
    expect(row.secret).not.toContain(u.secret);
    const [codes] = (await t.app.get(DataSource).query('SELECT count(*)::int AS n, bool_or("codeHash" = ANY($2)) AS plain FROM "recovery_codes" r JOIN "users" u ON u."id" = r."userId" WHERE u."email" = $1', [u.email, u.recoveryCodes])) as { n: number; plain: boolean }[];
    expect(codes).toEqual({ n: 10, plain: false });

    const session = await login(t.http, u.email, PASSWORD, u.store.codename);
    const p = as(t, u.store.codename, session.accessToken);
    const done = await p.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }).expect(200);
    expect(done.body).toMatchObject({ refreshToken: expect.any(String), accessTokenExpiresAt: expect.any(String), accessToken: expect.any(String) });
    expect(done.body.refreshToken).not.toBe(session.body.refreshToken);
    await as(t, u.store.codename, done.body.accessToken).get('/auth-api/sessions').expect(200);

    const next = await login(t.http, u.email, PASSWORD, u.store.codename);
    const byRecovery = await as(t, u.store.codename, next.accessToken).post(`${MFA}/recovery`, { code: u.recoveryCodes[0] }).expect(200);
    expect(byRecovery.body.refreshToken).toEqual(expect.any(String));
  });
});

describeWithRedis('authenticator apps on two replicas', 'the wrong-code counts are per instance without it', () => {
  const clock = new ManualClock();
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await Promise.all([startApp({ clock }), startApp({ clock })]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('refuses a code replayed on the other replica and counts wrong codes across both', async () => {
    const u = await enrolled(a, clock);
    const code = codeAt(u.secret, clock);
    await (await pendingLogin(a, u)).post(`${MFA}/totp/verify`, { code }).expect(200);
    expectError(await (await pendingLogin(b, u)).post(`${MFA}/totp/verify`, { code }), 403, 'TotpCodeInvalid');

    const session = await login(a.http, u.email, PASSWORD, u.store.codename);
    const wrong = wrongCode(u.secret, clock);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => as(i % 2 ? a : b, u.store.codename, session.accessToken).post(`${MFA}/totp/verify`, { code: wrong })));
    const evaluated = answers.filter((r) => r.status === 403).length;
    expect(evaluated).toBeGreaterThan(0);
    expect(evaluated).toBeLessThanOrEqual(5);
    expect(answers.filter((r) => r.status === 429).length).toBe(50 - evaluated);
    await as(b, u.store.codename, session.accessToken).get('/auth-api/currentuser').expect(401);
    expectError(await as(a, u.store.codename, session.accessToken).post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }), 429, 'TotpAttemptsExceeded');
  });
});

describe('authenticator apps across a KEY_ENCRYPTION_SECRET rotation', () => {
  const clock = new ManualClock();
  const OLD = 'the secret being replaced';
  const NEW = 'the secret replacing it';
  const apps: TestApp[] = [];
  const boot = async (env: Record<string, string>) => {
    const app = await startApp({ clock, env });
    apps.push(app);
    return app;
  };
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });

  const secretOf = async (t: TestApp, email: string) =>
    ((await t.app.get(DataSource).query('SELECT f."secret" FROM "totp_factors" f JOIN "users" u ON u."id" = f."userId" WHERE u."email" = $1', [email])) as { secret: string }[])[0].secret;

  it('answers 503 TotpSecretUnreadable (not a wrong code) when the secret changed alone; with the old one as KEY_ENCRYPTION_SECRET_PREVIOUS the app and recovery codes work and secrets are sealed again', async () => {
    // A signing key every app here can open (none sealed by these secrets).
    const plain = await boot({});
    await login(plain.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    const before = await boot({ KEY_ENCRYPTION_SECRET: OLD });
    const u = await enrolled(before, clock);
    const idle = await enrolled(before, clock);
    const sealedBefore = await secretOf(before, u.email);

    // Changed without the previous secret: a clear 503, the attempt not counted against the user.
    const changed = await boot({ KEY_ENCRYPTION_SECRET: NEW });
    const p = await pendingLogin(changed, u);
    for (let i = 0; i < 6; i++) expectError(await p.post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }), 503, 'TotpSecretUnreadable');

    // The rotation path: the new secret, and the old one beside it.
    const rotating = await boot({ KEY_ENCRYPTION_SECRET: NEW, KEY_ENCRYPTION_SECRET_PREVIOUS: OLD });
    await (await pendingLogin(rotating, u)).post(`${MFA}/totp/verify`, { code: codeAt(u.secret, clock) }).expect(200);
    clock.advance(STEP);
    await (await pendingLogin(rotating, u)).post(`${MFA}/recovery`, { code: u.recoveryCodes[0] }).expect(200);
    // every secret the old one sealed is sealed under the new one: the used one at once, the idle one by the boot's pass
    await rotating.app.get(MfaService).resealing;
    expect(await secretOf(rotating, u.email)).not.toBe(sealedBefore);
    // so the new secret alone now opens them
    for (const user of [u, idle]) {
      await (await pendingLogin(changed, user)).post(`${MFA}/totp/verify`, { code: codeAt(user.secret, clock) }).expect(200);
    }
    clock.advance(STEP);
  }, 60_000);

  it('refuses KEY_ENCRYPTION_SECRET_PREVIOUS alone or equal to the secret, without printing either', async () => {
    await expect(startApp({ env: { KEY_ENCRYPTION_SECRET_PREVIOUS: OLD } })).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(/KEY_ENCRYPTION_SECRET_PREVIOUS names the secrets KEY_ENCRYPTION_SECRET replaced/) });
    const short = startApp({ env: { KEY_ENCRYPTION_SECRET: 'short-secret' } });
    await expect(short).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringContaining('KEY_ENCRYPTION_SECRET=(not shown)') });
    await expect(short).rejects.toMatchObject({ message: expect.not.stringContaining('short-secret') });
  });
});
