import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ManualClock } from '../src/platform/clock/clock.js';
import type { SettingsOverrides } from '../src/settings.js';
import { EventPublisher } from '../src/delivery/broker/event-publisher.js';
import { VerificationRepository } from '../src/identity/verification/verification.repository.js';
import { expectError, login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, randomMobile, type RegisteredStore, type TestApp } from './helpers.js';

// The six verification flows in testMode (the code comes back in the `start` answer), their
// windows on a clock the test moves, brute force, codes out of their store or flow, no account
// enumeration; then the gates: verification required for login, and second factors.

const HEADER = 'svc-store-codename';
const V = '/auth-api/verification-services';
const LOGIN = '/auth-api/login';
const CURRENT = '/auth-api/currentuser';
const NEW_PASSWORD = 'a brand new secret';
const START_KEYS = ['codeIndex', 'date', 'expireTime', 'secretCode', 'status', 'timeStamp', 'verificationType'];


interface User {
  id: string;
  email: string;
  mobile: string;
  store: RegisteredStore;
  body: Record<string, unknown>;
}

// A user with email and mobile in a fresh store (or the one given).
async function registerUser(t: TestApp, store?: RegisteredStore, email = uniqueEmail()): Promise<User> {
  store ??= await registerStore(t.http);
  const mobile = randomMobile();
  const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, mobile, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
  return { id: res.body.user.id, email, mobile, store, body: res.body };
}

function start(t: TestApp, codename: string, flow: string, body: object = {}, token?: string) {
  const req = t.http.post(`${V}/${flow}/start`).set(HEADER, codename).send(body);
  return token ? req.set('Authorization', `Bearer ${token}`) : req;
}

function complete(t: TestApp, codename: string, flow: string, body: object, token?: string) {
  const req = t.http.post(`${V}/${flow}/complete`).set(HEADER, codename).send(body);
  return token ? req.set('Authorization', `Bearer ${token}`) : req;
}

async function codeFor(t: TestApp, codename: string, flow: string, body: object = {}, token?: string): Promise<string> {
  const res = await start(t, codename, flow, body, token).expect(200);
  return res.body.secretCode as string;
}

async function userRow(t: TestApp, id: string): Promise<{ emailVerified: boolean; mobileVerified: boolean }> {
  const [row] = (await t.app.get(DataSource).query('SELECT "emailVerified", "mobileVerified" FROM users WHERE id = $1', [id])) as { emailVerified: boolean; mobileVerified: boolean }[];
  return row;
}

const PUBLIC_FLOWS = { 'email-verification': { enabled: true }, 'mobile-verification': { enabled: true }, 'password-reset-by-email': { enabled: true }, 'password-reset-by-mobile': { enabled: true } };

describe('verification flows in testMode', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({
      clock,
      settings: {
        secondaryIdentifierPresence: 'optional',
        verification: {
          verificationMode: 'testMode',
          // One field changed: the flow keeps the rest of its shipped defaults.
          flows: { ...PUBLIC_FLOWS, 'email-verification': { enabled: true, expireTimeWindow: 600 } },
        },
      },
    });
  });
  afterAll(() => t.close());

  describe('each flow end to end', () => {
    it('registration answers carry emailVerificationNeeded and mobileVerificationNeeded', async () => {
      const user = await registerUser(t);
      expect(user.body).toMatchObject({ emailVerificationNeeded: true, mobileVerificationNeeded: true });
      const owner = await t.http.post('/auth-api/v1/registerstoreowner').send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Owner', store: { name: 'Verify Store' } }).expect(201);
      expect(owner.body.emailVerificationNeeded).toBe(true);
      expect(owner.body.mobileVerificationNeeded).toBeUndefined(); // no mobile given
    });

    it('email-verification: start answers the code and its window; complete verifies the email', async () => {
      const user = await registerUser(t);
      const started = await start(t, user.store.codename, 'email-verification', { email: user.email.toUpperCase() }).expect(200);
      expect(started.body).toEqual({
        status: 'OK',
        codeIndex: 1,
        timeStamp: clock.now().getTime(),
        date: clock.now().toISOString(),
        expireTime: 600,
        verificationType: 'byCode',
        secretCode: expect.stringMatching(/^\d{6}$/),
      });
      expect((await userRow(t, user.id)).emailVerified).toBe(false);
      const done = await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: started.body.secretCode }).expect(200);
      expect(done.body).toEqual({ status: 'OK', isVerified: true, email: user.email });
      expect(await userRow(t, user.id)).toEqual({ emailVerified: true, mobileVerified: false });
    });

    it('a completed verification or reset publishes user-updated with the changed user', async () => {
      const published: { topic: string; data: Record<string, unknown> }[] = [];
      const stop = t.app.get(EventPublisher).onPublished((topic, data) => published.push({ topic, data }));
      try {
        const user = await registerUser(t);
        const updated = () => published.filter((e) => e.topic === 'auth-user-updated' && e.data.id === user.id);
        const code = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
        await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: code }).expect(200);
        const first = await waitFor('user-updated after the verification', () => updated()[0]);
        expect(first.data).toMatchObject({ id: user.id, storeId: user.store.storeId, emailVerified: true });
        expect(first.data).not.toHaveProperty('password');
        const reset = await codeFor(t, user.store.codename, 'password-reset-by-email', { email: user.email });
        await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: reset, password: 'another good password 42' }).expect(200);
        await waitFor('user-updated after the reset', () => (updated().length >= 2 ? true : undefined));
      } finally {
        stop();
      }
    });

    it('mobile-verification: the number however written; complete verifies the mobile', async () => {
      const user = await registerUser(t);
      const loose = `+1 (415) 555-${user.mobile.slice(-4)}`;
      const code = await codeFor(t, user.store.codename, 'mobile-verification', { mobile: loose });
      const done = await complete(t, user.store.codename, 'mobile-verification', { mobile: user.mobile, secretCode: code }).expect(200);
      expect(done.body).toEqual({ status: 'OK', isVerified: true, mobile: user.mobile });
      expect(await userRow(t, user.id)).toEqual({ emailVerified: false, mobileVerified: true });
    });

    it('password-reset-by-email: a weak password is refused without spending the code; then the password changes and every session ends', async () => {
      const user = await registerUser(t);
      const sessions = [await login(t.http, user.email, PASSWORD, user.store.codename), await login(t.http, user.email, PASSWORD, user.store.codename)];
      const code = await codeFor(t, user.store.codename, 'password-reset-by-email', { email: user.email });

      expectError(await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: code, password: 'short' }), 400, 'WeakPassword');
      expectError(await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: code }), 400, 'ValidationFailed');
      const done = await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: code, password: NEW_PASSWORD }).expect(200);
      expect(done.body).toEqual({ status: 'OK', isVerified: true, email: user.email });

      for (const s of sessions) {
        const me = await t.http.get(CURRENT).set(HEADER, user.store.codename).set('Authorization', `Bearer ${s.accessToken}`);
        expect({ status: me.status, body: me.body }).toEqual({ status: 401, body: { status: 'ERR', message: 'No login found' } });
      }
      expectError(await t.http.post(LOGIN).set(HEADER, user.store.codename).send({ username: user.email, password: PASSWORD }), 401, 'InvalidCredentials');
      await login(t.http, user.email, NEW_PASSWORD, user.store.codename);
      // receiving the code proved the address
      expect((await userRow(t, user.id)).emailVerified).toBe(true);
      // single use
      expectError(await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: code, password: 'yet another one' }), 403, 'VerificationCodeInvalid');
    });

    it('password-reset-by-mobile: the new password works, the old one no longer', async () => {
      const user = await registerUser(t);
      const code = await codeFor(t, user.store.codename, 'password-reset-by-mobile', { mobile: user.mobile });
      await complete(t, user.store.codename, 'password-reset-by-mobile', { mobile: user.mobile, secretCode: code, password: NEW_PASSWORD }).expect(200);
      await login(t.http, user.email, NEW_PASSWORD, user.store.codename);
      expectError(await t.http.post(LOGIN).set(HEADER, user.store.codename).send({ username: user.email, password: PASSWORD }), 401, 'InvalidCredentials');
      expect((await userRow(t, user.id)).mobileVerified).toBe(true);
    });

    it('keeps only a hash of the code', async () => {
      const user = await registerUser(t);
      const code = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      const rows = (await t.app.get(DataSource).query('SELECT * FROM verification_codes WHERE "storeId" = $1', [user.store.storeId])) as Record<string, unknown>[];
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ purpose: 'email-verification', subject: user.email, userId: user.id, attempts: 0, codeIndex: 1 });
      expect(rows[0].codeHash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(rows)).not.toContain(code);
    });
  });

  describe('wrong, used, expired and resent codes', () => {
    it('a wrong code is refused and counted; the right one still works after it', async () => {
      const user = await registerUser(t);
      const code = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      const wrong = code === '000000' ? '000001' : '000000';
      expectError(await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: wrong }), 403, 'VerificationCodeInvalid');
      await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: code }).expect(200);
      expectError(await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: code }), 403, 'VerificationCodeInvalid');
    });

    it('brute force: of 50 concurrent wrong codes at most 5 are evaluated; then the right code fails too', async () => {
      const user = await registerUser(t);
      const code = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      const wrongs = Array.from({ length: 50 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
      const answers = await Promise.all(wrongs.map((secretCode) => complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode })));
      const codes = answers.map((r) => r.body.errCode as string);
      expect(codes.filter((c) => c === 'VerificationCodeInvalid')).toHaveLength(5);
      expect(codes.filter((c) => c === 'VerificationAttemptsExceeded')).toHaveLength(45);
      for (const r of answers.filter((a) => a.body.errCode === 'VerificationAttemptsExceeded')) expectError(r, 429, 'VerificationAttemptsExceeded');
      expectError(await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: code }), 429, 'VerificationAttemptsExceeded');
      expect((await userRow(t, user.id)).emailVerified).toBe(false);
      const [row] = (await t.app.get(DataSource).query('SELECT attempts FROM verification_codes WHERE "storeId" = $1', [user.store.storeId])) as { attempts: number }[];
      expect(row.attempts).toBe(5);
    });

    it('expires after expireTimeWindow on the service clock', async () => {
      const user = await registerUser(t);
      const code = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      clock.advance(600_000);
      expectError(await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: code }), 403, 'VerificationCodeExpired');
      expect((await userRow(t, user.id)).emailVerified).toBe(false);
    });

    it('works up to the last second of the window', async () => {
      const user = await registerUser(t);
      const code = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      clock.advance(599_000);
      await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: code }).expect(200);
    });

    it('refuses a new code within resendTimeWindow (429, Retry-After); after it a new code replaces the old one', async () => {
      const user = await registerUser(t);
      const first = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      clock.advance(20_000);
      const again = await start(t, user.store.codename, 'email-verification', { email: user.email });
      expectError(again, 429, 'VerificationResendTooSoon');
      expect(again.headers['retry-after']).toBe('40');
      clock.advance(40_000);
      const second = await start(t, user.store.codename, 'email-verification', { email: user.email }).expect(200);
      expect(second.body.codeIndex).toBe(2);
      if (second.body.secretCode !== first) {
        expectError(await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: first }), 403, 'VerificationCodeInvalid');
      }
      await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: second.body.secretCode }).expect(200);
    });

    it('a new code gives five new attempts', async () => {
      const user = await registerUser(t);
      await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      for (let i = 0; i < 6; i++) await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: 'nope' });
      clock.advance(60_000);
      const code = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: code }).expect(200);
    });
  });

  it('housekeeping deletes codes a day after they expired, and no other', async () => {
    const [old, fresh] = [await registerUser(t), await registerUser(t)];
    // The old code is sent back in time (it expired a day and a second ago), not the clock moved
    // a day ahead: the purge is for every store, and a cut-off in the future deleted the live
    // codes of suites running beside this one on the same database (a second factor's code
    // between its start and its complete: 403 VerificationCodeInvalid there).
    const back = 86_400_000 + 600_000 + 1000;
    clock.advance(-back);
    await codeFor(t, old.store.codename, 'email-verification', { email: old.email });
    clock.advance(back);
    await codeFor(t, fresh.store.codename, 'email-verification', { email: fresh.email });
    await t.app.get(VerificationRepository).purgeExpired(new Date(clock.now().getTime() - 86_400_000));
    const count = async (storeId: string) => ((await t.app.get(DataSource).query('SELECT id FROM verification_codes WHERE "storeId" = $1', [storeId])) as unknown[]).length;
    expect([await count(old.store.storeId), await count(fresh.store.storeId)]).toEqual([0, 1]);
  });

  describe('a code is bound to its store and its flow', () => {
    it('a code of store A never works in store B, for the same email', async () => {
      const email = uniqueEmail();
      const a = await registerUser(t, undefined, email);
      const b = await registerUser(t, undefined, email);
      const codeA = await codeFor(t, a.store.codename, 'email-verification', { email });
      await start(t, b.store.codename, 'email-verification', { email }).expect(200);
      expectError(await complete(t, b.store.codename, 'email-verification', { email, secretCode: codeA }), 403, 'VerificationCodeInvalid');
      expect((await userRow(t, b.id)).emailVerified).toBe(false);
      // nor was A's code spent or counted by B's attempt
      await complete(t, a.store.codename, 'email-verification', { email, secretCode: codeA }).expect(200);
    });

    it('a code for one flow never works for another', async () => {
      const user = await registerUser(t);
      const verify = await codeFor(t, user.store.codename, 'email-verification', { email: user.email });
      expectError(await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: verify, password: NEW_PASSWORD }), 403, 'VerificationCodeInvalid');
      await codeFor(t, user.store.codename, 'password-reset-by-email', { email: user.email });
      expectError(await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: verify, password: NEW_PASSWORD }), 403, 'VerificationCodeInvalid');
      await login(t.http, user.email, PASSWORD, user.store.codename);
    });

    it('a code for one identifier never works for another of the same store', async () => {
      const store = await registerStore(t.http);
      const [one, two] = [await registerUser(t, store), await registerUser(t, store)];
      const code = await codeFor(t, store.codename, 'email-verification', { email: one.email });
      await codeFor(t, store.codename, 'email-verification', { email: two.email });
      expectError(await complete(t, store.codename, 'email-verification', { email: two.email, secretCode: code }), 403, 'VerificationCodeInvalid');
    });
  });

  describe('no account enumeration', () => {
    it('an unknown email gets the same answer, with a code that never works', async () => {
      const store = await registerStore(t.http);
      const known = await registerUser(t, store);
      const unknown = uniqueEmail();
      for (const flow of ['email-verification', 'password-reset-by-email']) {
        const [a, b] = [await start(t, store.codename, flow, { email: known.email }), await start(t, store.codename, flow, { email: unknown })];
        expect([a.status, b.status]).toEqual([200, 200]);
        expect(Object.keys(a.body).sort()).toEqual(START_KEYS);
        expect(Object.keys(b.body).sort()).toEqual(START_KEYS);
        expect({ ...b.body, secretCode: 'x', timeStamp: 0, date: '' }).toEqual({ ...a.body, secretCode: 'x', timeStamp: 0, date: '' });
        expect(b.body.secretCode).toMatch(/^\d{6}$/);
        expectError(await complete(t, store.codename, flow, { email: unknown, secretCode: b.body.secretCode, password: NEW_PASSWORD }), 403, 'VerificationCodeInvalid');
        // and the resend window holds for both alike
        expectError(await start(t, store.codename, flow, { email: unknown }), 429, 'VerificationResendTooSoon');
        expectError(await start(t, store.codename, flow, { email: known.email }), 429, 'VerificationResendTooSoon');
      }
    });

    it('an already verified email gets the same answer; its code changes nothing', async () => {
      const user = await registerUser(t);
      await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: await codeFor(t, user.store.codename, 'email-verification', { email: user.email }) }).expect(200);
      clock.advance(60_000);
      const again = await start(t, user.store.codename, 'email-verification', { email: user.email }).expect(200);
      expect(Object.keys(again.body).sort()).toEqual(START_KEYS);
      expectError(await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: again.body.secretCode }), 403, 'VerificationCodeInvalid');
    });

    it('a deactivated user gets the same answer and cannot reset its password', async () => {
      const user = await registerUser(t);
      await t.app.get(DataSource).query('UPDATE users SET "isActive" = false WHERE id = $1', [user.id]);
      const code = await codeFor(t, user.store.codename, 'password-reset-by-email', { email: user.email });
      expectError(await complete(t, user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: code, password: NEW_PASSWORD }), 403, 'VerificationCodeInvalid');
    });
  });

  describe('bad input', () => {
    it('a missing or malformed identifier is a 400, never a 500', async () => {
      const store = await registerStore(t.http);
      expectError(await start(t, store.codename, 'email-verification', {}), 400, 'ValidationFailed');
      expectError(await start(t, store.codename, 'email-verification', { email: 'not-an-email' }), 400, 'ValidationFailed');
      expectError(await start(t, store.codename, 'mobile-verification', { mobile: '12' }), 400, 'InvalidMobile');
      expectError(await start(t, store.codename, 'email-verification', { email: uniqueEmail(), role: 'x' }), 400, 'UnknownField');
      expectError(await complete(t, store.codename, 'email-verification', { email: uniqueEmail() }), 400, 'ValidationFailed');
      expectError(await complete(t, store.codename, 'email-verification', { email: uniqueEmail(), secretCode: 'x'.repeat(129) }), 400, 'ValidationFailed');
    });

    it('an unknown flow is a 404; a second factor through the public path needs its login', async () => {
      expectError(await start(t, 'root', 'phone-verification', {}), 404, 'RouteNotFound');
      expectError(await start(t, 'root', 'email-2factor-verification', {}), 401, 'Unauthorized');
    });

    it('a flow that is not enabled answers 404 VerificationFlowDisabled', async () => {
      const user = await registerUser(t);
      const session = await login(t.http, user.email, PASSWORD, user.store.codename);
      expectError(await start(t, user.store.codename, 'email-2factor-verification', {}, session.accessToken), 404, 'VerificationFlowDisabled');
    });
  });
});

// Every kind of protected route, as a login with a pending second factor meets it: the 403
// names the route.
const GATED: { method: 'get' | 'post' | 'patch' | 'delete'; path: (ids: { userId: string; sessionId: string }) => string; route: string }[] = [
  { method: 'get', path: () => '/auth-api/v1/users', route: 'getUsers' },
  { method: 'get', path: (i) => `/auth-api/v1/users/${i.userId}`, route: 'getUsersById' },
  { method: 'patch', path: (i) => `/auth-api/v1/users/${i.userId}`, route: 'patchUsersById' },
  { method: 'delete', path: (i) => `/auth-api/v1/users/${i.userId}`, route: 'deleteUsersById' },
  { method: 'post', path: () => '/auth-api/users', route: 'postUsers' },
  { method: 'get', path: () => '/auth-api/sessions', route: 'getSessions' },
  { method: 'delete', path: (i) => `/auth-api/sessions/${i.sessionId}`, route: 'deleteSessionsById' },
  { method: 'delete', path: () => '/auth-api/sessions', route: 'deleteSessions' },
  { method: 'get', path: () => '/auth-api/v1/apikeys', route: 'getApikeys' },
  { method: 'post', path: () => '/auth-api/v1/apikeys', route: 'postApikeys' },
  { method: 'get', path: () => '/notifications', route: 'getNotifications' },
  { method: 'get', path: () => '/notifications/unread', route: 'getNotificationsUnread' },
  { method: 'post', path: () => '/auth-api/bucket/userAvatars/upload', route: 'postBucketUserAvatarsUpload' },
];

function gated(t: TestApp, codename: string, token: string, g: (typeof GATED)[number], ids: { userId: string; sessionId: string }) {
  return t.http[g.method](g.path(ids)).set(HEADER, codename).set('Authorization', `Bearer ${token}`).send({});
}

const GATE_SETTINGS: SettingsOverrides = {
  secondaryIdentifierPresence: 'optional',
  emailVerificationRequiredForLogin: true,
  mobileVerificationRequiredForLogin: true,
  email2FARequiredForLogin: true,
  mobile2FARequiredForLogin: true,
  verification: {
    verificationMode: 'testMode',
    flows: { ...PUBLIC_FLOWS, 'email-2factor-verification': { enabled: true }, 'mobile-2factor-verification': { enabled: true } },
  },
};

describe('gates: verification required for login, and second factors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ settings: GATE_SETTINGS });
  });
  afterAll(() => t.close());

  async function verify(user: { email: string; mobile?: string; store: RegisteredStore }): Promise<void> {
    const c = user.store.codename;
    await complete(t, c, 'email-verification', { email: user.email, secretCode: await codeFor(t, c, 'email-verification', { email: user.email }) }).expect(200);
    if (user.mobile) await complete(t, c, 'mobile-verification', { mobile: user.mobile, secretCode: await codeFor(t, c, 'mobile-verification', { mobile: user.mobile }) }).expect(200);
  }

  async function secondFactor(codename: string, factor: 'email' | 'mobile', token: string) {
    const flow = `${factor}-2factor-verification`;
    const code = await codeFor(t, codename, flow, {}, token);
    return complete(t, codename, flow, { secretCode: code }, token).expect(200);
  }

  it('refuses login until the email, then the mobile, is verified: the spec 403 bodies', async () => {
    const user = await registerUser(t);
    expect(user.body).toMatchObject({ emailVerificationNeeded: true, mobileVerificationNeeded: true });
    const first = await t.http.post(LOGIN).set(HEADER, user.store.codename).send({ username: user.email, password: PASSWORD });
    expect(first.status).toBe(403);
    expect(first.body).toMatchObject({ result: 'ERR', status: 403, message: 'errMsg_EmailNotVerified', errCode: 'EmailVerificationNeeded' });
    await complete(t, user.store.codename, 'email-verification', { email: user.email, secretCode: await codeFor(t, user.store.codename, 'email-verification', { email: user.email }) }).expect(200);
    const second = await t.http.post(LOGIN).set(HEADER, user.store.codename).send({ username: user.email, password: PASSWORD });
    expect(second.status).toBe(403);
    expect(second.body).toMatchObject({ result: 'ERR', status: 403, message: 'errMsg_MobileNotVerified', errCode: 'MobileVerificationNeeded' });
    // a wrong password still says only that: nothing about verification
    expectError(await t.http.post(LOGIN).set(HEADER, user.store.codename).send({ username: user.email, password: 'wrong password' }), 401, 'InvalidCredentials');
  });

  it('a login with both factors pending: flags on the session, 403 on every protected route until both are done', async () => {
    const store = await registerStore(t.http);
    const owner = { email: store.ownerEmail, store };
    await verify(owner);
    const session = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect(session.body).toMatchObject({ sessionNeedsEmail2FA: true });
    expect(session.body.sessionNeedsMobile2FA).toBeUndefined(); // the owner has no mobile
    const ids = { userId: store.ownerId, sessionId: session.sessionId };

    for (const g of GATED) {
      const res = await gated(t, store.codename, session.accessToken, g, ids);
      expect({ route: g.route, status: res.status, body: res.body }).toMatchObject({
        route: g.route,
        status: 403,
        body: { result: 'ERR', status: 403, errCode: 'EmailTwoFactorNeeded', message: `errMsg_${g.route}RequiresEmail2FA` },
      });
    }
    // the bucket token of that login is held back too
    const bucket = await t.http.post('/auth-api/bucket/userAvatars/upload').set(HEADER, store.codename).set('Authorization', `Bearer ${session.userBucketToken}`).send({});
    expectError(bucket, 403, 'EmailTwoFactorNeeded');

    // /currentuser answers, with the flag
    const me = await t.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${session.accessToken}`).expect(200);
    expect(me.body).toMatchObject({ sessionId: session.sessionId, sessionNeedsEmail2FA: true });

    // a wrong code, then the right one: the answer is the session without the flag
    const code = await codeFor(t, store.codename, 'email-2factor-verification', {}, session.accessToken);
    expectError(await complete(t, store.codename, 'email-2factor-verification', { secretCode: code === '000000' ? '000001' : '000000' }, session.accessToken), 403, 'VerificationCodeInvalid');
    const done = await complete(t, store.codename, 'email-2factor-verification', { secretCode: code }, session.accessToken).expect(200);
    // with fresh tokens: those of the pending sign-in finish it and serve nothing else
    expect(done.body).toEqual({
      sessionId: session.sessionId,
      userId: store.ownerId,
      email: store.ownerEmail,
      fullname: 'Store Owner',
      roleId: 'tenantOwner',
      tenantId: store.storeId,
      accessToken: expect.any(String),
      userBucketToken: expect.any(String),
    });
    expect(done.body.accessToken).not.toBe(session.accessToken);
    expectError(await t.http.get('/auth-api/v1/users').set(HEADER, store.codename).set('Authorization', `Bearer ${session.accessToken}`), 401, 'AccessTokenPending');
    await t.http.get(`/auth-api/v1/users/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${done.body.accessToken}`).expect(200);
    await t.http.get('/auth-api/v1/users').set(HEADER, store.codename).set('Authorization', `Bearer ${done.body.accessToken}`).expect(200);
    // nothing pending any more
    expectError(await start(t, store.codename, 'email-2factor-verification', {}, session.accessToken), 409, 'SecondFactorNotPending');
  });

  it('both factors: the email one done, the mobile one still closes the routes', async () => {
    const user = await registerUser(t);
    await verify(user);
    const session = await login(t.http, user.email, PASSWORD, user.store.codename);
    expect(session.body).toMatchObject({ sessionNeedsEmail2FA: true, sessionNeedsMobile2FA: true });
    const afterEmail = await secondFactor(user.store.codename, 'email', session.accessToken);
    expect(afterEmail.body).toMatchObject({ sessionNeedsMobile2FA: true });
    expect(afterEmail.body.sessionNeedsEmail2FA).toBeUndefined();
    const res = await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${session.accessToken}`);
    expectError(res, 403, 'MobileTwoFactorNeeded');
    expect(res.body.message).toBe('errMsg_getSessionsRequiresMobile2FA');
    // a user without an admin role meets the 2FA answer first, not a role refusal
    expectError(await t.http.get('/auth-api/v1/users').set(HEADER, user.store.codename).set('Authorization', `Bearer ${session.accessToken}`), 403, 'MobileTwoFactorNeeded');
    // the answer's tokens still say pending: the mobile factor is still to do
    const afterMobile = await secondFactor(user.store.codename, 'mobile', afterEmail.body.accessToken);
    expect(afterMobile.body.sessionNeedsMobile2FA).toBeUndefined();
    expectError(await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${afterEmail.body.accessToken}`), 401, 'AccessTokenPending');
    expectError(await t.http.get('/auth-api/v1/users').set(HEADER, user.store.codename).set('Authorization', `Bearer ${afterMobile.body.accessToken}`), 403, 'Forbidden');
    await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${afterMobile.body.accessToken}`).expect(200);
  });

  it('a code is bound to its session: another login of the same user cannot use it', async () => {
    const user = await registerUser(t);
    await verify(user);
    const [one, two] = [await login(t.http, user.email, PASSWORD, user.store.codename), await login(t.http, user.email, PASSWORD, user.store.codename)];
    const code = await codeFor(t, user.store.codename, 'email-2factor-verification', {}, one.accessToken);
    await codeFor(t, user.store.codename, 'email-2factor-verification', {}, two.accessToken);
    expectError(await complete(t, user.store.codename, 'email-2factor-verification', { secretCode: code }, two.accessToken), 403, 'VerificationCodeInvalid');
    // and completing one login's factor leaves the other's pending
    await complete(t, user.store.codename, 'email-2factor-verification', { secretCode: code }, one.accessToken).expect(200);
    const me = await t.http.get(CURRENT).set(HEADER, user.store.codename).set('Authorization', `Bearer ${two.accessToken}`).expect(200);
    expect(me.body.sessionNeedsEmail2FA).toBe(true);
  });

  it('logout works while a factor is pending', async () => {
    const user = await registerUser(t);
    await verify(user);
    const session = await login(t.http, user.email, PASSWORD, user.store.codename);
    await t.http.post('/auth-api/logout').set(HEADER, user.store.codename).set('Authorization', `Bearer ${session.accessToken}`).expect(200);
    const me = await t.http.get(CURRENT).set(HEADER, user.store.codename).set('Authorization', `Bearer ${session.accessToken}`);
    expect(me.status).toBe(401);
  });

  it('API keys are not held back by a pending factor of their creator', async () => {
    const store = await registerStore(t.http);
    await verify({ email: store.ownerEmail, store });
    const first = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const passed = await secondFactor(store.codename, 'email', first.accessToken);
    const created = await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', `Bearer ${passed.body.accessToken}`).send({ name: 'backend' }).expect(201);
    const key = created.body.apiKey.key as string;
    // a new login of the owner is pending again; the key goes on working
    const second = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    expect(second.body.sessionNeedsEmail2FA).toBe(true);
    expectError(await t.http.get('/auth-api/v1/users').set(HEADER, store.codename).set('Authorization', `Bearer ${second.accessToken}`), 403, 'EmailTwoFactorNeeded');
    await t.http.get('/auth-api/v1/users').set(HEADER, store.codename).set('Authorization', `Bearer ${key}`).expect(200);
    const me = await t.http.get(CURRENT).set('Authorization', `Bearer ${key}`).expect(200);
    expect(me.body).toMatchObject({ userId: store.ownerId, tenantId: store.storeId });
    expect(me.body.sessionNeedsEmail2FA).toBeUndefined();
  });
});
