import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ParsedMail } from 'mailparser';
import { DataSource } from 'typeorm';
import { ManualClock } from '../src/platform/clock/clock.js';
import type { SettingsOverrides } from '../src/settings.js';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { FakeApi, type Received } from './fake-api.js';
import { smtp, startMailServer, type MailServer } from './mail-server.js';
import { codeAt, TOTP_STEP_MS } from './totp-codes.js';
import { cookieNamed, describeWithRedis, expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, waitFor, randomMobile, type RegisteredStore, type TestApp } from './helpers.js';

// Passwordless sign-in end to end: by code and by link, by email and by SMS, in testMode (the
// secrets come back in the `start` answer) and in liveMode (read from the mail and the SMS the
// stand-ins received); no account enumeration; brute force; codes out of their store, address,
// use or window; sign-up on and off; second factors still asked; rate limits.

const HEADER = 'svc-store-codename';
const P = '/auth-api/passwordless';
const START_KEYS = ['codeIndex', 'date', 'expireTime', 'secretCode', 'secretToken', 'status', 'timeStamp', 'verificationType'];


interface User {
  id: string;
  email: string;
  mobile: string;
  store: RegisteredStore;
}

async function registerUser(t: TestApp, store?: RegisteredStore, email = uniqueEmail()): Promise<User> {
  store ??= await registerStore(t.http);
  const mobile = randomMobile();
  const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, mobile, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
  return { id: res.body.user.id, email, mobile, store };
}

function start(t: TestApp, codename: string, body: object) {
  return t.http.post(`${P}/start`).set(HEADER, codename).send(body);
}

function complete(t: TestApp, codename: string, body: object) {
  return t.http.post(`${P}/complete`).set(HEADER, codename).send(body);
}

async function userRow(t: TestApp, id: string): Promise<{ emailVerified: boolean; mobileVerified: boolean }> {
  const [row] = (await t.app.get(DataSource).query('SELECT "emailVerified", "mobileVerified" FROM users WHERE id = $1', [id])) as { emailVerified: boolean; mobileVerified: boolean }[];
  return row;
}

async function usersWith(t: TestApp, storeId: string, column: 'email' | 'mobile', value: string): Promise<Record<string, unknown>[]> {
  return (await t.app.get(DataSource).query(`SELECT * FROM users WHERE "storeId" = $1 AND "${column}" = $2`, [storeId, value])) as Record<string, unknown>[];
}

// The store's audit entries of one action, once the queue is written.
async function audited(t: TestApp, storeId: string, action: string): Promise<{ outcome: string; reason: string | null; targetId: string | null; details: Record<string, unknown> | null }[]> {
  await t.app.get(AuditRecorderService).flush();
  return (await t.app.get(DataSource).query('SELECT outcome, reason, "targetId", details FROM audit_log WHERE "storeId" = $1 AND action = $2 ORDER BY seq', [storeId, action])) as never;
}

// testMode, code and link in one message, email and SMS, no sign-up.
const TEST_MODE: SettingsOverrides = {
  secondaryIdentifierPresence: 'optional',
  verification: { verificationMode: 'testMode' },
  passwordlessLogin: { enabled: true, channels: ['email', 'sms'], verificationType: 'both', expireTimeWindow: 300, resendTimeWindow: 60, allowSignUp: false },
};

describe('passwordless sign-in in testMode', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({ clock, env: { SERVICE_CODENAME: unique('pl') }, settings: TEST_MODE });
  });
  afterAll(() => t.close());

  describe('end to end', () => {
    it('by email code: the answer of /login (tokens, cookie), the email verified, user.login.succeeded with method passwordless', async () => {
      const user = await registerUser(t);
      const started = await start(t, user.store.codename, { email: user.email.toUpperCase() }).expect(200);
      expect(started.body).toEqual({
        status: 'OK',
        codeIndex: 1,
        timeStamp: clock.now().getTime(),
        date: clock.now().toISOString(),
        expireTime: 300,
        verificationType: 'both',
        secretCode: expect.stringMatching(/^\d{6}$/),
        secretToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect((await userRow(t, user.id)).emailVerified).toBe(false);

      const done = await complete(t, user.store.codename, { email: user.email, secretCode: started.body.secretCode }).expect(200);
      const password = await t.http.post('/auth-api/login').set(HEADER, user.store.codename).send({ username: user.email, password: PASSWORD }).expect(200);
      expect(Object.keys(done.body).sort()).toEqual(Object.keys(password.body).sort());
      expect(done.body).toMatchObject({ userId: user.id, email: user.email, accessToken: expect.any(String) });
      expect(cookieNamed(done, `svc-access-token-${user.store.codename}`).value).toBe(done.body.accessToken);
      const current = await t.http.get('/auth-api/currentuser').set(HEADER, user.store.codename).set('Authorization', `Bearer ${done.body.accessToken}`).expect(200);
      expect(current.body).toMatchObject({ userId: user.id, sessionId: done.body.sessionId });
      expect(await userRow(t, user.id)).toEqual({ emailVerified: true, mobileVerified: false });

      const entries = await audited(t, user.store.storeId, 'user.login.succeeded');
      expect(entries.filter((e) => e.targetId === user.id).map((e) => e.details?.method)).toEqual(['passwordless', 'password']);
      // Using the code spent the link sent with it.
      expectError(await complete(t, user.store.codename, { token: started.body.secretToken }), 403, 'VerificationCodeInvalid');
    });

    it('by SMS link: the token alone signs in, the mobile is verified, and the code sent with it is spent', async () => {
      const user = await registerUser(t);
      const loose = `+1 (415) 555-${user.mobile.slice(-4)}`;
      const started = await start(t, user.store.codename, { mobile: loose }).expect(200);
      const done = await complete(t, user.store.codename, { token: started.body.secretToken }).expect(200);
      expect(done.body).toMatchObject({ userId: user.id, accessToken: expect.any(String) });
      expect(await userRow(t, user.id)).toEqual({ emailVerified: false, mobileVerified: true });
      expectError(await complete(t, user.store.codename, { mobile: user.mobile, secretCode: started.body.secretCode }), 403, 'VerificationCodeInvalid');
    });

    it('keeps only keyed hashes of the code and the token, under the passwordless flows', async () => {
      const user = await registerUser(t);
      const started = await start(t, user.store.codename, { email: user.email }).expect(200);
      await start(t, user.store.codename, { mobile: user.mobile }).expect(200);
      const rows = (await t.app.get(DataSource).query('SELECT * FROM verification_codes WHERE "storeId" = $1 ORDER BY purpose', [user.store.storeId])) as Record<string, unknown>[];
      expect(rows.map((r) => [r.purpose, r.subject, r.userId])).toEqual([
        ['passwordless-login-by-email', user.email, user.id],
        ['passwordless-login-by-mobile', user.mobile, user.id],
      ]);
      for (const r of rows) {
        expect(r.codeHash).toMatch(/^[0-9a-f]{64}$/);
        expect(r.linkHash).toMatch(/^[0-9a-f]{64}$/);
      }
      expect(JSON.stringify(rows)).not.toContain(started.body.secretCode);
      expect(JSON.stringify(rows)).not.toContain(started.body.secretToken);
    });

    it('a user with an authenticator app signs in pending its code, as a password login would', async () => {
      const user = await registerUser(t);
      const first = await login(t.http, user.email, PASSWORD, user.store.codename);
      const api = (path: string, body: object, token: string) => t.http.post(path).set(HEADER, user.store.codename).set('Authorization', `Bearer ${token}`).send(body);
      const setup = await api('/auth-api/mfa/totp/setup', {}, first.accessToken).expect(200);
      await api('/auth-api/mfa/totp/confirm', { code: codeAt(setup.body.secret, clock) }, first.accessToken).expect(200);
      clock.advance(TOTP_STEP_MS);

      const started = await start(t, user.store.codename, { email: user.email }).expect(200);
      const done = await complete(t, user.store.codename, { email: user.email, secretCode: started.body.secretCode }).expect(200);
      expect(done.body.sessionNeedsTotp2FA).toBe(true);
      expectError(await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${done.body.accessToken}`), 403, 'TotpTwoFactorNeeded');
      const verified = await api('/auth-api/mfa/totp/verify', { code: codeAt(setup.body.secret, clock) }, done.body.accessToken).expect(200);
      const token = (verified.body.accessToken as string | undefined) ?? (done.body.accessToken as string);
      await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${token}`).expect(200);
    });
  });

  describe('refused codes and links', () => {
    it('a wrong code is refused (user.login.failed, wrong_code) and counted; the right one still works after it', async () => {
      const user = await registerUser(t);
      const started = await start(t, user.store.codename, { email: user.email }).expect(200);
      const wrong = started.body.secretCode === '000000' ? '000001' : '000000';
      expectError(await complete(t, user.store.codename, { email: user.email, secretCode: wrong }), 403, 'VerificationCodeInvalid');
      await complete(t, user.store.codename, { email: user.email, secretCode: started.body.secretCode }).expect(200);
      const failed = await audited(t, user.store.storeId, 'user.login.failed');
      expect(failed).toEqual([{ outcome: 'failure', reason: 'wrong_code', targetId: null, details: { identifierHash: expect.stringMatching(/^[0-9a-f]{64}$/) } }]);
      expect(JSON.stringify(failed)).not.toContain(user.email);
    });

    it('brute force: of 50 concurrent wrong codes at most 5 are evaluated; then the right code fails too', async () => {
      const user = await registerUser(t);
      const started = await start(t, user.store.codename, { email: user.email }).expect(200);
      const right = started.body.secretCode as string;
      const wrongs = Array.from({ length: 50 }, (_, i) => String((Number(right) + 1 + i) % 1_000_000).padStart(6, '0'));
      const results = await Promise.all(wrongs.map((secretCode) => complete(t, user.store.codename, { email: user.email, secretCode })));
      const codes = results.map((r) => `${r.status} ${r.body.errCode}`);
      expect(codes.filter((c) => c === '403 VerificationCodeInvalid').length).toBeLessThanOrEqual(5);
      expect(codes.filter((c) => c !== '403 VerificationCodeInvalid').every((c) => c === '429 VerificationAttemptsExceeded')).toBe(true);
      const [row] = (await t.app.get(DataSource).query('SELECT attempts FROM verification_codes WHERE "storeId" = $1', [user.store.storeId])) as { attempts: number }[];
      expect(row.attempts).toBe(5);
      expectError(await complete(t, user.store.codename, { email: user.email, secretCode: right }), 429, 'VerificationAttemptsExceeded');
      expectError(await complete(t, user.store.codename, { token: started.body.secretToken }), 429, 'VerificationAttemptsExceeded');
    });

    it('a code and a link of store A never work in store B, for the same email', async () => {
      const email = uniqueEmail();
      const a = await registerUser(t, undefined, email);
      const b = await registerUser(t, undefined, email);
      const inA = await start(t, a.store.codename, { email }).expect(200);
      await start(t, b.store.codename, { email }).expect(200);
      expectError(await complete(t, b.store.codename, { email, secretCode: inA.body.secretCode }), 403, 'VerificationCodeInvalid');
      expectError(await complete(t, b.store.codename, { token: inA.body.secretToken }), 403, 'VerificationCodeInvalid');
      const done = await complete(t, a.store.codename, { token: inA.body.secretToken }).expect(200);
      expect(done.body.userId).toBe(a.id);
    });

    it('a code for one address never works for another of the same store', async () => {
      const ada = await registerUser(t);
      const bob = await registerUser(t, ada.store);
      const forAda = await start(t, ada.store.codename, { email: ada.email }).expect(200);
      const forBob = await start(t, ada.store.codename, { email: bob.email }).expect(200);
      if (forAda.body.secretCode !== forBob.body.secretCode) {
        expectError(await complete(t, ada.store.codename, { email: bob.email, secretCode: forAda.body.secretCode }), 403, 'VerificationCodeInvalid');
      }
      // by email, the mobile of the same user is another address
      expectError(await complete(t, ada.store.codename, { mobile: ada.mobile, secretCode: forAda.body.secretCode }), 403, 'VerificationCodeInvalid');
      expect((await complete(t, ada.store.codename, { email: bob.email, secretCode: forBob.body.secretCode }).expect(200)).body.userId).toBe(bob.id);
    });

    it('a used code or link is refused', async () => {
      const user = await registerUser(t);
      const first = await start(t, user.store.codename, { email: user.email }).expect(200);
      await complete(t, user.store.codename, { email: user.email, secretCode: first.body.secretCode }).expect(200);
      expectError(await complete(t, user.store.codename, { email: user.email, secretCode: first.body.secretCode }), 403, 'VerificationCodeInvalid');
      clock.advance(61_000);
      const second = await start(t, user.store.codename, { email: user.email }).expect(200);
      await complete(t, user.store.codename, { token: second.body.secretToken }).expect(200);
      expectError(await complete(t, user.store.codename, { token: second.body.secretToken }), 403, 'VerificationCodeInvalid');
    });

    it('expires after expireTimeWindow on the service clock; works up to its last second', async () => {
      const user = await registerUser(t);
      const started = await start(t, user.store.codename, { email: user.email }).expect(200);
      clock.advance(300_000);
      expectError(await complete(t, user.store.codename, { email: user.email, secretCode: started.body.secretCode }), 403, 'VerificationCodeExpired');
      expectError(await complete(t, user.store.codename, { token: started.body.secretToken }), 403, 'VerificationCodeExpired');
      const again = await start(t, user.store.codename, { email: user.email }).expect(200);
      expect(again.body.codeIndex).toBe(2);
      clock.advance(299_000);
      await complete(t, user.store.codename, { email: user.email, secretCode: again.body.secretCode }).expect(200);
    });

    it('refuses a new code within resendTimeWindow (429, Retry-After); after it a new code replaces the old one', async () => {
      const user = await registerUser(t);
      const first = await start(t, user.store.codename, { email: user.email }).expect(200);
      clock.advance(20_000);
      const early = await start(t, user.store.codename, { email: user.email });
      expectError(early, 429, 'VerificationResendTooSoon');
      expect(early.headers['retry-after']).toBe('40');
      clock.advance(40_000);
      const second = await start(t, user.store.codename, { email: user.email }).expect(200);
      expect(second.body.codeIndex).toBe(2);
      if (first.body.secretCode !== second.body.secretCode) {
        expectError(await complete(t, user.store.codename, { email: user.email, secretCode: first.body.secretCode }), 403, 'VerificationCodeInvalid');
      }
      expectError(await complete(t, user.store.codename, { token: first.body.secretToken }), 403, 'VerificationCodeInvalid');
      await complete(t, user.store.codename, { email: user.email, secretCode: second.body.secretCode }).expect(200);
    });
  });

  describe('no account enumeration', () => {
    it('an unknown address gets the same answer, with a code and a link that never work (as a wrong code), and nothing is created', async () => {
      const user = await registerUser(t);
      const stranger = uniqueEmail();
      const known = await start(t, user.store.codename, { email: user.email });
      const unknown = await start(t, user.store.codename, { email: stranger });
      expect(unknown.status).toBe(known.status);
      expect(Object.keys(unknown.body).sort()).toEqual(START_KEYS);
      expect({ ...unknown.body, secretCode: 'x', secretToken: 'x' }).toEqual({ ...known.body, secretCode: 'x', secretToken: 'x' });

      const wrongForKnown = await complete(t, user.store.codename, { email: user.email, secretCode: known.body.secretCode === '000000' ? '000001' : '000000' });
      const rightForUnknown = await complete(t, user.store.codename, { email: stranger, secretCode: unknown.body.secretCode });
      const shape = (r: { status: number; body: Record<string, unknown> }) => ({ status: r.status, body: { ...r.body, requestId: 'per request' } });
      expect(shape(rightForUnknown)).toEqual(shape(wrongForKnown));
      expectError(await complete(t, user.store.codename, { token: unknown.body.secretToken }), 403, 'VerificationCodeInvalid');
      expect(await usersWith(t, user.store.storeId, 'email', stranger)).toEqual([]);

      // an unknown mobile too
      const mobile = randomMobile();
      const unknownSms = await start(t, user.store.codename, { mobile }).expect(200);
      expectError(await complete(t, user.store.codename, { mobile, secretCode: unknownSms.body.secretCode }), 403, 'VerificationCodeInvalid');
    });

    it('a deactivated user gets the same answer and cannot sign in', async () => {
      const user = await registerUser(t);
      await t.app.get(DataSource).query('UPDATE users SET "isActive" = false WHERE id = $1', [user.id]);
      const started = await start(t, user.store.codename, { email: user.email }).expect(200);
      expect(Object.keys(started.body).sort()).toEqual(START_KEYS);
      expectError(await complete(t, user.store.codename, { email: user.email, secretCode: started.body.secretCode }), 403, 'VerificationCodeInvalid');
    });
  });

  describe('bad input', () => {
    it('no address, two addresses, a malformed one, a code without its address, a token with one: 400, never a 500', async () => {
      const store = await registerStore(t.http);
      for (const body of [{}, { email: uniqueEmail(), mobile: randomMobile() }, { email: 'not-an-email' }, { mobile: 'abc' }, { email: uniqueEmail(), extra: 1 }]) {
        const res = await start(t, store.codename, body);
        expect(res.status).toBe(400);
      }
      for (const body of [{}, { secretCode: '123456' }, { email: uniqueEmail() }, { token: 'abc', email: uniqueEmail() }, { token: 'a b' }, { token: 'abc', secretCode: '123456' }]) {
        const res = await complete(t, store.codename, body);
        expect(res.status).toBe(400);
      }
    });
  });
});

describe('passwordless sign-in with sign-up', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      env: { SERVICE_CODENAME: unique('pl') },
      settings: {
        verification: { verificationMode: 'testMode', flows: { 'password-reset-by-email': { enabled: true } } },
        passwordlessLogin: { enabled: true, channels: ['email'], verificationType: 'byCode', resendTimeWindow: 0, allowSignUp: true },
      },
    });
  });
  afterAll(() => t.close());

  it('an unknown address completing the flow gets a new store user with the email verified (user.created), who can set a password by reset', async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    const started = await start(t, store.codename, { email }).expect(200);
    expect(started.body).toMatchObject({ verificationType: 'byCode', secretCode: expect.stringMatching(/^\d{6}$/) });
    expect(started.body.secretToken).toBeUndefined();
    expect(await usersWith(t, store.storeId, 'email', email)).toEqual([]); // nothing before the code comes back

    const done = await complete(t, store.codename, { email, secretCode: started.body.secretCode }).expect(200);
    const [row] = await usersWith(t, store.storeId, 'email', email);
    expect(row).toMatchObject({ id: done.body.userId, storeId: store.storeId, emailVerified: true, roles: ['tenantUser'], isActive: true });
    expect(done.body).toMatchObject({ email, roleId: 'tenantUser' });
    const created = await audited(t, store.storeId, 'user.created');
    expect(created.filter((e) => e.targetId === row.id)).toEqual([{ outcome: 'success', reason: null, targetId: row.id, details: { via: 'passwordless' } }]);
    // No password works until one is set.
    expectError(await t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: email, password: PASSWORD }), 401, 'InvalidCredentials');
    const reset = await t.http.post('/auth-api/verification-services/password-reset-by-email/start').set(HEADER, store.codename).send({ email }).expect(200);
    await t.http.post('/auth-api/verification-services/password-reset-by-email/complete').set(HEADER, store.codename).send({ email, secretCode: reset.body.secretCode, password: PASSWORD }).expect(200);
    await login(t.http, email, PASSWORD, store.codename);

    // The next passwordless sign-in finds the same account.
    const again = await start(t, store.codename, { email }).expect(200);
    expect((await complete(t, store.codename, { email, secretCode: again.body.secretCode }).expect(200)).body.userId).toBe(row.id);
    expect(await usersWith(t, store.storeId, 'email', email)).toHaveLength(1);
  });

  it('a wrong code creates nothing; a sign-up code is bound to its store', async () => {
    const a = await registerStore(t.http);
    const b = await registerStore(t.http);
    const email = uniqueEmail();
    const started = await start(t, a.codename, { email }).expect(200);
    const wrong = started.body.secretCode === '000000' ? '000001' : '000000';
    expectError(await complete(t, a.codename, { email, secretCode: wrong }), 403, 'VerificationCodeInvalid');
    expectError(await complete(t, b.codename, { email, secretCode: started.body.secretCode }), 403, 'VerificationCodeInvalid');
    expect(await usersWith(t, a.storeId, 'email', email)).toEqual([]);
    expect(await usersWith(t, b.storeId, 'email', email)).toEqual([]);
  });

  it('a channel not in settings channels answers 404 PasswordlessChannelDisabled; a link where codes are sent is refused', async () => {
    const store = await registerStore(t.http);
    expectError(await start(t, store.codename, { mobile: randomMobile() }), 404, 'PasswordlessChannelDisabled');
    expectError(await complete(t, store.codename, { mobile: randomMobile(), secretCode: '123456' }), 404, 'PasswordlessChannelDisabled');
    expectError(await complete(t, store.codename, { token: 'a'.repeat(43) }), 403, 'VerificationCodeInvalid');
  });
});

describe('passwordless sign-in with an email second factor', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      env: { SERVICE_CODENAME: unique('pl') },
      settings: {
        secondaryIdentifierPresence: 'optional',
        email2FARequiredForLogin: true,
        verification: { verificationMode: 'testMode', flows: { 'email-2factor-verification': { enabled: true } } },
        passwordlessLogin: { enabled: true, channels: ['email'], verificationType: 'byLink' },
      },
    });
  });
  afterAll(() => t.close());

  it('the session waits for the email factor, as after a password login', async () => {
    const user = await registerUser(t);
    const started = await start(t, user.store.codename, { email: user.email }).expect(200);
    expect(started.body.secretCode).toBeUndefined();
    const done = await complete(t, user.store.codename, { token: started.body.secretToken }).expect(200);
    expect(done.body.sessionNeedsEmail2FA).toBe(true);
    const auth = (req: ReturnType<TestApp['http']['post']>) => req.set(HEADER, user.store.codename).set('Authorization', `Bearer ${done.body.accessToken}`);
    expectError(await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${done.body.accessToken}`), 403, 'EmailTwoFactorNeeded');
    const factor = await auth(t.http.post('/auth-api/verification-services/email-2factor-verification/start')).send({}).expect(200);
    const passed = await auth(t.http.post('/auth-api/verification-services/email-2factor-verification/complete')).send({ secretCode: factor.body.secretCode }).expect(200);
    const token = (passed.body.accessToken as string | undefined) ?? (done.body.accessToken as string);
    await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${token}`).expect(200);
    // byLink: a code submission is never evaluated
    expectError(await complete(t, user.store.codename, { email: user.email, secretCode: '123456' }), 403, 'VerificationCodeInvalid');
  });
});

describe('passwordless sign-in switched off, and its rate limits', () => {
  let off: TestApp;
  let t: TestApp;
  beforeAll(async () => {
    off = await startApp({ env: { SERVICE_CODENAME: unique('pl') } });
    t = await startApp({
      env: { SERVICE_CODENAME: unique('pl') },
      settings: {
        secondaryIdentifierPresence: 'optional',
        verification: { verificationMode: 'testMode' },
        passwordlessLogin: { enabled: true, channels: ['email'], resendTimeWindow: 0 },
        rateLimits: { passwordlessPerAddress: { points: 3, durationSeconds: 600 }, passwordlessPerIp: { points: 10, durationSeconds: 600 } },
      },
    });
  });
  afterAll(async () => {
    await off?.close();
    await t?.close();
  });

  it('off (the default): both routes answer 404 PasswordlessLoginDisabled', async () => {
    const store = await registerStore(off.http);
    expectError(await start(off, store.codename, { email: uniqueEmail() }), 404, 'PasswordlessLoginDisabled');
    expectError(await complete(off, store.codename, { email: uniqueEmail(), secretCode: '123456' }), 404, 'PasswordlessLoginDisabled');
  });

  it('per address, known or not: 429 TooManyRequests with Retry-After; then per client address', async () => {
    const user = await registerUser(t);
    const stranger = uniqueEmail();
    for (const email of [user.email, stranger]) {
      await start(t, user.store.codename, { email }).expect(200);
      await start(t, user.store.codename, { email }).expect(200);
      expectError(await complete(t, user.store.codename, { email, secretCode: '000000' }), 403, 'VerificationCodeInvalid');
      const limited = await start(t, user.store.codename, { email });
      expectError(limited, 429, 'TooManyRequests');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expectError(await complete(t, user.store.codename, { email, secretCode: '000000' }), 429, 'TooManyRequests');
    }
    // 10 calls from this client so far, refused ones included: the next address meets the client's limit
    expectError(await start(t, user.store.codename, { email: uniqueEmail() }), 429, 'TooManyRequests');
  });
});

const form = (r: Received): Record<string, string> => Object.fromEntries(new URLSearchParams(r.text));
const SID = 'AC0123456789abcdef0123456789abcdef';
const FRONTEND = 'https://app.example.test/base';

describe('passwordless sign-in in liveMode, through a real SMTP server and the SMS API stand-in', () => {
  let t: TestApp;
  let mail: MailServer;
  const twilio = new FakeApi((r) => ({ status: 201, body: { sid: `SM${'0'.repeat(32)}`, account_sid: SID, to: form(r).To, body: form(r).Body, status: 'queued', error_code: null } }));

  beforeAll(async () => {
    [mail] = await Promise.all([startMailServer(), twilio.start()]);
    t = await startApp({
      env: { SERVICE_CODENAME: unique('pl'), TWILIO_AUTH_TOKEN: 'tok' },
      settings: {
        secondaryIdentifierPresence: 'optional',
        verification: { verificationMode: 'liveMode', frontendUrl: FRONTEND },
        passwordlessLogin: { enabled: true, channels: ['email', 'sms'], verificationType: 'both', allowSignUp: false },
        notifications: {
          providers: [smtp('mail', mail.port), { providerName: 'twilio', providerType: 'twilio', providerSettings: { accountSid: SID, authToken: { env: 'TWILIO_AUTH_TOKEN' }, from: '+15005550006', apiBaseUrl: twilio.url } }],
          channels: [
            { channelName: 'email', providers: ['mail'], fallbackProviders: [] },
            { channelName: 'sms', providers: ['twilio'], fallbackProviders: [] },
            { channelName: 'inApp', providers: [], fallbackProviders: [] },
          ],
          templates: [{ templateName: 'welcome', channel: 'inApp', language: 'en', subject: 'Welcome', body: 'Ready.' }],
          eventRules: [],
          worker: { concurrency: 5, maxAttempts: 3, backoffMs: 30 },
        },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([mail?.close(), twilio.stop()]);
  });

  const nthMail = (address: string, n = 1): Promise<ParsedMail> => waitFor(`mail ${n} to ${address}`, () => mail.to(address)[n - 1]?.mail);
  const nthSms = (to: string, n = 1): Promise<string> => waitFor(`sms ${n} to ${to}`, () => twilio.requests.map(form).filter((f) => f.To === to)[n - 1]?.Body);
  const codeIn = (text: string): string => /\b(\d{6})\b/.exec(text)![1];
  const linkIn = (text: string): string => new RegExp(`${FRONTEND}/passwordlessLogin/([A-Za-z0-9_-]+)`).exec(text)![1];

  it('the mail carries the code and the link {frontendUrl}/passwordlessLogin/{token}; the answer neither', async () => {
    const user = await registerUser(t);
    const started = await start(t, user.store.codename, { email: user.email }).expect(200);
    expect(Object.keys(started.body).sort()).toEqual(START_KEYS.filter((k) => k !== 'secretCode' && k !== 'secretToken'));
    const message = await nthMail(user.email);
    expect(message.subject).toMatch(/^Sign in to /);
    const html = message.html || '';
    expect(html).toContain('Hello Ada Lovelace');
    const done = await complete(t, user.store.codename, { email: user.email, secretCode: codeIn(message.text ?? '') }).expect(200);
    expect(done.body.userId).toBe(user.id);
    expectError(await complete(t, user.store.codename, { token: linkIn(html) }), 403, 'VerificationCodeInvalid');

    // the link of the next message signs in by itself
    await start(t, user.store.codename, { mobile: user.mobile }).expect(200); // another channel, another row
    const sms = await nthSms(user.mobile);
    expect(sms).toMatch(/^\d{6} is your code to sign in to .+\. Or open https:\/\/app\.example\.test\/base\/passwordlessLogin\/[A-Za-z0-9_-]+ It expires in 10 minutes\.$/);
    const byLink = await complete(t, user.store.codename, { token: linkIn(sms) }).expect(200);
    expect(byLink.body.userId).toBe(user.id);
    expect(await userRow(t, user.id)).toEqual({ emailVerified: true, mobileVerified: true });
  });

  it('by SMS code; an unknown address gets the same answer and no message', async () => {
    const user = await registerUser(t);
    const stranger = uniqueEmail();
    const strangerMobile = randomMobile();
    const known = await start(t, user.store.codename, { mobile: user.mobile }).expect(200);
    const unknown = await start(t, user.store.codename, { mobile: strangerMobile }).expect(200);
    expect(unknown.body).toEqual({ ...known.body, timeStamp: unknown.body.timeStamp, date: unknown.body.date });
    await start(t, user.store.codename, { email: stranger }).expect(200);
    const sms = await nthSms(user.mobile);
    await complete(t, user.store.codename, { mobile: user.mobile, secretCode: codeIn(sms) }).expect(200);
    // delivered mail and SMS for the known one by now; nothing for the others
    await new Promise((r) => setTimeout(r, 300));
    expect(mail.to(stranger)).toEqual([]);
    expect(twilio.requests.map(form).filter((f) => f.To === strangerMobile)).toEqual([]);
  });
});

describe('passwordless settings that cannot work stop the boot', () => {
  it('SMS without mobiles in the user model, liveMode without the channel, sign-up that cannot give a required identifier', async () => {
    const sms = startApp({ settings: { passwordlessLogin: { enabled: true, channels: ['sms'] } } });
    const { message: noMobile } = (await sms.catch((e: unknown) => e)) as Error;
    expect(noMobile).toContain('settings.passwordlessLogin.channels: users have no mobile for sms');
    expect(noMobile).toContain('settings.passwordlessLogin.channels: liveMode needs the notification channel sms');

    const signUp = startApp({ settings: { secondaryIdentifierPresence: 'required', passwordlessLogin: { enabled: true, channels: ['email'], allowSignUp: true }, verification: { verificationMode: 'testMode' } } });
    const { message: required } = (await signUp.catch((e: unknown) => e)) as Error;
    expect(required).toContain('settings.passwordlessLogin.allowSignUp: a sign-up by email cannot give the required mobile');
  });
});

// Two replicas on one database and one Redis: the limits and the codes hold across them.
describeWithRedis('passwordless sign-in across replicas', 'the limits are per instance without it', () => {
  const apps: TestApp[] = [];
  beforeAll(async () => {
    const env = { SERVICE_CODENAME: unique('pl') };
    const settings: SettingsOverrides = {
      ...TEST_MODE,
      passwordlessLogin: { ...TEST_MODE.passwordlessLogin, resendTimeWindow: 0 },
      rateLimits: { passwordlessPerAddress: { points: 3, durationSeconds: 600 } },
    };
    apps.push(await startApp({ env, settings }), await startApp({ env, settings }));
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
  });

  it('a code from one replica signs in on the other; the per-address limit counts on both', async () => {
    const [a, b] = apps;
    const user = await registerUser(a);
    const started = await start(a, user.store.codename, { email: user.email }).expect(200);
    expect((await complete(b, user.store.codename, { email: user.email, secretCode: started.body.secretCode }).expect(200)).body.userId).toBe(user.id);
    // the sign-in cleared the count: three more calls, then 429 on either replica
    await start(b, user.store.codename, { email: user.email }).expect(200);
    await start(a, user.store.codename, { email: user.email }).expect(200);
    await start(b, user.store.codename, { email: user.email }).expect(200);
    expectError(await start(a, user.store.codename, { email: user.email }), 429, 'TooManyRequests');
  });
});
