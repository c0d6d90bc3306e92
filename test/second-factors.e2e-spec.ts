import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { ManualClock } from '../src/platform/clock/clock.js';
import { SoftAuthenticator } from './fixtures/soft-authenticator.js';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';
import { followRedirects, startOAuthServer, type OAuthPeer } from './oauth-peers.js';
import { codeAt, TOTP_STEP_MS } from './totp-codes.js';

// Every way of signing in × every second factor a user can hold, as a client meets them: a
// password, an emailed code or a social provider proves one factor, and a user with an
// authenticator app or a passkey (or whose role requires one) is pending until it proves one
// too. A passkey sign-in (user verification required) is complete by itself. While pending, the
// token says so (`acr: pending`, no `aud`), opens no other route and introspects as inactive;
// the factor's answer brings fresh tokens that say what was proved (`amr`, `acr`, `auth_time`).

const HEADER = 'svc-store-codename';
const ORIGIN = 'https://app.example.com';
const WEBAUTHN = { rpId: 'example.com', rpName: 'Example', origins: [ORIGIN] };
const AUDIENCE = 'orders-api';
const FRONTEND = 'http://127.0.0.1:9/app';

type Method = 'password' | 'passwordless' | 'social';
type Factors = 'none' | 'totp' | 'passkey' | 'both';
type Completion = 'totp' | 'recovery' | 'passkey' | 'enrol-totp' | 'enrol-passkey' | 'nothing';

// The method's own `amr`.
const METHOD_AMR: Record<Method, string> = { password: 'pwd', passwordless: 'email', social: 'fed' };

interface Person {
  id: string;
  email: string;
  socialId: string;
  secret?: string;
  recoveryCodes: string[];
  authenticator: SoftAuthenticator;
}

describe('second factors: every sign-in method × every factor a user holds', () => {
  let t: TestApp;
  let base: string;
  let gitlab: OAuthPeer;
  let store: RegisteredStore;
  let owner: string;
  let adminKey: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    gitlab = await startOAuthServer();
    t = await startApp({
      clock,
      env: { FRONTEND_URL: FRONTEND, GITLAB_SECRET: 'gitlab-secret' },
      settings: {
        webauthn: WEBAUTHN,
        tokenAudience: AUDIENCE,
        // Administrators must hold a second factor; plain users choose.
        mfaRequiredForRoles: ['tenantAdmin'],
        verification: { verificationMode: 'testMode' },
        passwordlessLogin: { enabled: true, channels: ['email'], verificationType: 'byCode', expireTimeWindow: 300, resendTimeWindow: 1, allowSignUp: false },
        socialLogin: {
          providers: { gitlab: { enabled: true, clientId: 'gitlab-client', clientSecret: { env: 'GITLAB_SECRET' }, authorizationUrl: `${gitlab.url}/authorize`, tokenUrl: `${gitlab.url}/token`, profileUrl: `${gitlab.url}/userinfo` } },
        },
      },
    });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    store = await registerStore(t.http);
    owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    adminKey = (await as(owner).post('/auth-api/v1/apikeys').send({ name: 'introspection' }).expect(201)).body.apiKey.key;
  });
  afterAll(async () => {
    await t?.close();
    await gitlab?.close();
  });

  function as(token: string) {
    const auth = (req: ReturnType<TestApp['http']['get']>) => req.set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);
    return {
      get: (path: string) => auth(t.http.get(path)),
      post: (path: string, body: object = {}) => auth(t.http.post(path)).send(body),
      patch: (path: string, body: object = {}) => auth(t.http.patch(path)).send(body),
    };
  }

  const introspect = async (token: string) => (await t.http.post('/auth-api/introspect').set('Authorization', `Bearer ${adminKey}`).send({ token }).expect(200)).body;

  // The provider's round trip, as a browser makes it: the socialCode the frontend receives.
  async function socialCode(socialId: string, email: string): Promise<string> {
    gitlab.profile = { id: socialId, username: 'matrix', name: 'Matrix User', email, confirmed_at: '2024-01-01T00:00:00Z' };
    const landed = await followRedirects(`${base}/auth-api/auth/gitlab?_store=${store.codename}`, FRONTEND);
    return landed.searchParams.get('socialCode')!;
  }

  // A user of the store with a password and a linked social account, holding `factors`; an
  // administrator (whose role requires a factor) when `admin`.
  async function person(factors: Factors, admin: boolean): Promise<Person> {
    const email = uniqueEmail();
    const socialId = unique('gl');
    const needed = await t.http.post('/auth-api/auth/social-login-result').set(HEADER, store.codename).send({ socialCode: await socialCode(socialId, email) }).expect(200);
    const registered = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ socialCode: needed.body.socialCode, password: PASSWORD }).expect(201);
    const p: Person = { id: registered.body.user.id, email, socialId, recoveryCodes: [], authenticator: new SoftAuthenticator(ORIGIN) };
    const session = as((await login(t.http, email, PASSWORD, store.codename)).accessToken);
    if (factors === 'passkey' || factors === 'both') {
      const options = (await session.post('/auth-api/passkeys/register/options').expect(200)).body;
      await session.post('/auth-api/passkeys/register/verify', { response: p.authenticator.create(options) }).expect(201);
    }
    if (factors === 'totp' || factors === 'both') {
      p.secret = (await session.post('/auth-api/mfa/totp/setup').expect(200)).body.secret;
      p.recoveryCodes = (await session.post('/auth-api/mfa/totp/confirm', { code: codeAt(p.secret!, clock) }).expect(200)).body.recoveryCodes;
      clock.advance(TOTP_STEP_MS);
    }
    if (admin) await as(owner).patch(`/auth-api/v1/users/${p.id}`, { roleId: 'tenantAdmin' }).expect(200);
    return p;
  }

  async function signIn(method: Method, p: Person) {
    if (method === 'password') return t.http.post('/auth-api/login').set(HEADER, store.codename).send({ username: p.email, password: PASSWORD }).expect(200);
    if (method === 'social') return t.http.post('/auth-api/auth/social-login-result').set(HEADER, store.codename).send({ socialCode: await socialCode(p.socialId, p.email) }).expect(200);
    clock.advance(2_000); // past the resend window of the previous code
    const started = await t.http.post('/auth-api/passwordless/start').set(HEADER, store.codename).send({ email: p.email }).expect(200);
    return t.http.post('/auth-api/passwordless/complete').set(HEADER, store.codename).send({ email: p.email, secretCode: started.body.secretCode }).expect(200);
  }

  // The pending sign-in's factor: its answer.
  async function complete(completion: Completion, p: Person, token: string) {
    const api = as(token);
    switch (completion) {
      case 'totp': {
        const res = await api.post('/auth-api/mfa/totp/verify', { code: codeAt(p.secret!, clock) }).expect(200);
        clock.advance(TOTP_STEP_MS);
        return res.body;
      }
      case 'recovery':
        return (await api.post('/auth-api/mfa/recovery', { code: p.recoveryCodes.shift() }).expect(200)).body;
      case 'passkey': {
        const options = (await api.post('/auth-api/passkeys/2fa/options').expect(200)).body;
        expect(options.allowCredentials.map((c: { id: string }) => c.id)).toEqual(p.authenticator.credentials.map((c) => c.id));
        return (await api.post('/auth-api/passkeys/2fa/verify', { response: p.authenticator.get(options, false) }).expect(200)).body;
      }
      case 'enrol-totp': {
        const secret = (await api.post('/auth-api/mfa/totp/setup').expect(200)).body.secret;
        const res = await api.post('/auth-api/mfa/totp/confirm', { code: codeAt(secret, clock) }).expect(200);
        clock.advance(TOTP_STEP_MS);
        return res.body.session;
      }
      case 'enrol-passkey': {
        const options = (await api.post('/auth-api/passkeys/register/options').expect(200)).body;
        return (await api.post('/auth-api/passkeys/register/verify', { response: p.authenticator.create(options) }).expect(201)).body.session;
      }
      case 'nothing':
        throw new Error('nothing to complete');
    }
  }

  const FACTOR_AMR: Record<Completion, string[]> = { totp: ['otp'], recovery: ['otp'], passkey: ['hwk'], 'enrol-totp': ['otp'], 'enrol-passkey': ['hwk'], nothing: [] };

  const cases: [Method, Factors, boolean, Completion][] = [];
  for (const method of ['password', 'passwordless', 'social'] as Method[]) {
    for (const admin of [false, true]) {
      cases.push([method, 'totp', admin, 'totp'], [method, 'totp', admin, 'recovery'], [method, 'passkey', admin, 'passkey']);
      cases.push([method, 'both', admin, 'totp'], [method, 'both', admin, 'passkey'], [method, 'both', admin, 'recovery']);
    }
    cases.push([method, 'none', false, 'nothing'], [method, 'none', true, 'enrol-totp'], [method, 'none', true, 'enrol-passkey']);
  }

  it.each(cases)('%s sign-in, factors %s (admin %s): completed by %s', async (method, factors, admin, completion) => {
    const p = await person(factors, admin);
    const res = await signIn(method, p);
    const first = res.body.accessToken as string;
    const signedIn = decodeJwt(first);
    expect(signedIn.amr).toEqual([METHOD_AMR[method]]);

    if (completion === 'nothing') {
      // one factor, and nothing asks for another: complete as it is
      for (const flag of ['sessionNeedsTotp2FA', 'sessionNeedsPasskey2FA', 'mfaEnrollmentNeeded']) expect(res.body[flag]).toBeUndefined();
      expect(signedIn).toMatchObject({ acr: 'aal1', aud: AUDIENCE, auth_time: expect.any(Number) });
      await as(first).get('/auth-api/sessions').expect(200);
      expect(await introspect(first)).toMatchObject({ active: true, acr: 'aal1', amr: [METHOD_AMR[method]] });
      return;
    }

    // pending: the flags name the factors that complete it
    const hasTotp = factors === 'totp' || factors === 'both';
    const hasPasskey = factors === 'passkey' || factors === 'both';
    expect({ totp: res.body.sessionNeedsTotp2FA, passkey: res.body.sessionNeedsPasskey2FA, enrol: res.body.mfaEnrollmentNeeded }).toEqual({
      totp: hasTotp || undefined,
      passkey: hasPasskey || undefined,
      enrol: factors === 'none' || undefined,
    });
    expect(signedIn.acr).toBe('pending');
    expect(signedIn.aud).toBeUndefined();
    expect(signedIn.auth_time).toBeUndefined();
    const refusal = hasTotp ? 'TotpTwoFactorNeeded' : hasPasskey ? 'PasskeyTwoFactorNeeded' : 'MfaEnrollmentRequired';
    expectError(await as(first).get('/auth-api/sessions'), 403, refusal);
    expectError(await as(first).post('/auth-api/v1/apikeys', { name: 'k' }), 403, refusal);
    if (admin) expectError(await as(first).get('/auth-api/v1/users'), 403, refusal);
    expect(await introspect(first)).toEqual({ active: false });

    const done = await complete(completion, p, first);
    const fresh = done.accessToken as string;
    expect(fresh).not.toBe(first);
    for (const flag of ['sessionNeedsTotp2FA', 'sessionNeedsPasskey2FA', 'mfaEnrollmentNeeded']) expect(done[flag]).toBeUndefined();
    const completed = decodeJwt(fresh);
    expect(completed).toMatchObject({ acr: 'aal2', aud: AUDIENCE, amr: [METHOD_AMR[method], ...FACTOR_AMR[completion], 'mfa'], auth_time: expect.any(Number) });
    expect(decodeJwt(done.userBucketToken)).toMatchObject({ use: 'bucket', acr: 'aal2' });
    // the pending sign-in's token finished it and serves nothing else
    expectError(await as(first).get('/auth-api/sessions'), 401, 'AccessTokenPending');
    expect(await introspect(first)).toEqual({ active: false });
    await as(fresh).get('/auth-api/sessions').expect(200);
    if (admin) await as(fresh).get('/auth-api/v1/users').expect(200);
    expect(await introspect(fresh)).toMatchObject({ active: true, acr: 'aal2', amr: completed.amr, auth_time: completed.auth_time });
  });

  it.each([
    ['a device-bound passkey', false, 'hwk'],
    ['a synced passkey', true, 'swk'],
  ])('%s signs in completely by itself, whatever other factors the user holds', async (_name, synced, amr) => {
    const p = await person('both', true);
    p.authenticator = new SoftAuthenticator(ORIGIN, synced);
    const session = as((await complete('totp', p, (await signIn('password', p)).body.accessToken)).accessToken);
    const options = (await session.post('/auth-api/passkeys/register/options').expect(200)).body;
    await session.post('/auth-api/passkeys/register/verify', { response: p.authenticator.create(options) }).expect(201);

    const request = (await t.http.post('/auth-api/passkeys/login/options').set(HEADER, store.codename).expect(200)).body;
    const res = await t.http.post('/auth-api/passkeys/login/verify').set(HEADER, store.codename).send({ response: p.authenticator.get(request) }).expect(200);
    for (const flag of ['sessionNeedsTotp2FA', 'sessionNeedsPasskey2FA', 'mfaEnrollmentNeeded']) expect(res.body[flag]).toBeUndefined();
    expect(decodeJwt(res.body.accessToken)).toMatchObject({ acr: 'aal2', amr: [amr, 'mfa'], aud: AUDIENCE });
    await as(res.body.accessToken).get('/auth-api/v1/users').expect(200);
  });

  it('takes only the signed-in user\'s passkey as its second factor, once per challenge', async () => {
    const p = await person('passkey', false);
    const other = await person('passkey', false);
    const pending = as((await signIn('password', p)).body.accessToken);
    const options = (await pending.post('/auth-api/passkeys/2fa/options').expect(200)).body;
    // another user's passkey (its authenticator signing this challenge) is not this user's
    expectError(await pending.post('/auth-api/passkeys/2fa/verify', { response: other.authenticator.get({ ...options, allowCredentials: [] }) }), 404, 'PasskeyNotFound');
    // the challenge was used up by that attempt
    expectError(await pending.post('/auth-api/passkeys/2fa/verify', { response: p.authenticator.get(options) }), 400, 'PasskeyChallengeExpired');
    const again = (await pending.post('/auth-api/passkeys/2fa/options').expect(200)).body;
    await pending.post('/auth-api/passkeys/2fa/verify', { response: p.authenticator.get(again) }).expect(200);
    // nothing pending any more
    expectError(await pending.post('/auth-api/passkeys/2fa/options'), 409, 'SecondFactorNotPending');
  });

  it('ends the other sessions when a user takes its first second factor, and keeps the one that did', async () => {
    for (const factor of ['totp', 'passkey'] as const) {
      const p = await person('none', false);
      const [a, b] = [await login(t.http, p.email, PASSWORD, store.codename), await login(t.http, p.email, PASSWORD, store.codename)];
      const api = as(a.accessToken);
      if (factor === 'totp') {
        const secret = (await api.post('/auth-api/mfa/totp/setup').expect(200)).body.secret;
        await api.post('/auth-api/mfa/totp/confirm', { code: codeAt(secret, clock) }).expect(200);
        clock.advance(TOTP_STEP_MS);
      } else {
        const options = (await api.post('/auth-api/passkeys/register/options').expect(200)).body;
        await api.post('/auth-api/passkeys/register/verify', { response: p.authenticator.create(options) }).expect(201);
      }
      expect((await as(b.accessToken).get('/auth-api/currentuser').expect(401)).body).toEqual({ status: 'ERR', message: 'No login found' });
      await api.get('/auth-api/sessions').expect(200);
      // the enrolment proved the factor in this sign-in too
      expect((await introspect(a.accessToken)).amr).toEqual(['pwd', factor === 'totp' ? 'otp' : 'hwk', 'mfa']);
    }
  });
});
