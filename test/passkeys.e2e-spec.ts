import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { MfaService } from '../src/identity/mfa/mfa.service.js';
import { PasskeyService } from '../src/identity/passkey/passkey.service.js';
import { ManualClock } from '../src/platform/clock/clock.js';
import { expectError, login, registerStore, startApp, type RegisteredStore, type TestApp } from './helpers.js';

// Passkey routes at the API: settings, options, and the challenges' rules (single use, 5
// minutes, their store and purpose). The ceremonies themselves run in a real browser in
// passkeys-browser.e2e-spec.ts.
const ORIGIN = 'https://app.example.com';
const WEBAUTHN = { rpId: 'example.com', rpName: 'Example', origins: [ORIGIN, 'android:apk-key-hash:abc'] };

const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url');

// An authenticator's answer naming `challenge`: enough to reach the challenge check, signed by nothing.
function answerFor(challenge: string, type = 'webauthn.get') {
  const id = b64url(randomBytes(16));
  const clientDataJSON = b64url(JSON.stringify({ type, challenge, origin: ORIGIN }));
  const response = type === 'webauthn.get' ? { clientDataJSON, authenticatorData: b64url(randomBytes(37)), signature: b64url(randomBytes(64)) } : { clientDataJSON, attestationObject: b64url(randomBytes(64)) };
  return { id, rawId: id, type: 'public-key', response, clientExtensionResults: {} };
}

describe('passkeys at the API', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({ clock, settings: { webauthn: WEBAUTHN } });
  });
  afterAll(() => t.close());

  const loginOptions = (store: RegisteredStore) => t.http.post('/auth-api/passkeys/login/options').set('svc-store-codename', store.codename).expect(200);
  const loginVerify = (store: RegisteredStore, response: unknown) => t.http.post('/auth-api/passkeys/login/verify').set('svc-store-codename', store.codename).send({ response });

  it('gives sign-in options for discoverable passkeys: no credentials listed, user verification required', async () => {
    const store = await registerStore(t.http);
    const { body } = await loginOptions(store);
    expect(body).toMatchObject({ challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), rpId: 'example.com', userVerification: 'required', timeout: 300_000 });
    expect(body.allowCredentials ?? []).toEqual([]);
  });

  it('gives enrolment options: the relying party, the user, resident key preferred, user verification required', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    const { body } = await t.http.post('/auth-api/passkeys/register/options').set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`).expect(200);
    expect(body).toMatchObject({
      rp: { id: 'example.com', name: 'Example' },
      user: { id: b64url(store.ownerId), name: store.ownerEmail, displayName: 'Store Owner' },
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      excludeCredentials: [],
      attestation: 'none',
    });
  });

  it('enrolment needs a login', async () => {
    const store = await registerStore(t.http);
    await t.http.post('/auth-api/passkeys/register/options').set('svc-store-codename', store.codename).expect(401);
    await t.http.get('/auth-api/passkeys').set('svc-store-codename', store.codename).expect(401);
  });

  it('uses a challenge once: the second answer with it is refused, even when both race', async () => {
    const store = await registerStore(t.http);
    const { challenge } = (await loginOptions(store)).body;
    // The first use takes the challenge (this credential is unknown here, so no session).
    expectError(await loginVerify(store, answerFor(challenge)), 404, 'PasskeyNotFound');
    expectError(await loginVerify(store, answerFor(challenge)), 400, 'PasskeyChallengeExpired');

    const raced = (await loginOptions(store)).body.challenge;
    const answers = await Promise.all([1, 2, 3].map(() => loginVerify(store, answerFor(raced))));
    expect(answers.map((a) => a.body.errCode).sort()).toEqual(['PasskeyChallengeExpired', 'PasskeyChallengeExpired', 'PasskeyNotFound']);
  });

  it('lets a challenge live 5 minutes', async () => {
    const store = await registerStore(t.http);
    const fresh = (await loginOptions(store)).body.challenge;
    const stale = (await loginOptions(store)).body.challenge;
    clock.advance(4 * 60_000);
    expectError(await loginVerify(store, answerFor(fresh)), 404, 'PasskeyNotFound');
    clock.advance(60_000 + 1);
    expectError(await loginVerify(store, answerFor(stale)), 400, 'PasskeyChallengeExpired');
  });

  it('keeps a challenge to its store and its ceremony', async () => {
    const store = await registerStore(t.http);
    const other = await registerStore(t.http);
    expectError(await loginVerify(other, answerFor((await loginOptions(store)).body.challenge)), 400, 'PasskeyChallengeExpired');

    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    const enrol = (response: unknown) => t.http.post('/auth-api/passkeys/register/verify').set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`).send({ response });
    // A sign-in challenge does not enrol, an enrolment challenge does not sign in.
    expectError(await enrol(answerFor((await loginOptions(store)).body.challenge, 'webauthn.create')), 400, 'PasskeyChallengeExpired');
    const registration = await t.http.post('/auth-api/passkeys/register/options').set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`).expect(200);
    expectError(await loginVerify(store, answerFor(registration.body.challenge)), 400, 'PasskeyChallengeExpired');
    // A forged attestation with a good challenge is refused by verification, not stored.
    const again = await t.http.post('/auth-api/passkeys/register/options').set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`).expect(200);
    expectError(await enrol(answerFor(again.body.challenge, 'webauthn.create')), 400, 'PasskeyVerificationFailed');
    const list = await t.http.get('/auth-api/passkeys').set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`).expect(200);
    expect(list.body).toEqual({ status: 'OK', passkeys: [] });
  });

  it('answers 404 PasskeyNotFound for a passkey that is not yours, and 400 for a malformed answer', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    const id = '00000000-0000-4000-8000-000000000000';
    const as = (req: ReturnType<TestApp['http']['get']>) => req.set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`);
    expectError(await as(t.http.patch(`/auth-api/passkeys/${id}`)).send({ name: 'x' }), 404, 'PasskeyNotFound');
    expectError(await as(t.http.delete(`/auth-api/passkeys/${id}`)), 404, 'PasskeyNotFound');
    expect((await loginVerify(store, { id: 'x' })).status).toBe(400);
    expectError(await loginVerify(store, { ...answerFor('x'), response: { clientDataJSON: 'not json' } }), 400, 'PasskeyVerificationFailed');
  });

  it('counts a user\'s passkeys for other features; an administrator\'s reset of the factors deletes them and keeps the user\'s hasPasskey right', async () => {
    const store = await registerStore(t.http);
    const passkeys = t.app.get(PasskeyService);
    const db = t.app.get(DataSource);
    await db.query(`INSERT INTO "passkeys" ("id", "storeId", "userId", "credentialId", "publicKey", "name", "createdAt") VALUES (gen_random_uuid(), $1, $2, $3, '\\x00', 'k', now())`, [store.storeId, store.ownerId, b64url(randomBytes(16))]);
    await db.query(`UPDATE "users" SET "hasPasskey" = true WHERE "id" = $1`, [store.ownerId]);
    expect(await passkeys.count(store.storeId, store.ownerId)).toBe(1);
    await t.app.get(MfaService).reset(store.storeId, store.ownerId, async () => undefined);
    expect(await passkeys.count(store.storeId, store.ownerId)).toBe(0);
    expect((await db.query(`SELECT "hasPasskey" FROM "users" WHERE "id" = $1`, [store.ownerId]))[0].hasPasskey).toBe(false);
  });
});

describe('passkeys while settings webauthn is null', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answer 404 WebAuthnNotConfigured', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, undefined, store.codename);
    expectError(await t.http.post('/auth-api/passkeys/login/options').set('svc-store-codename', store.codename), 404, 'WebAuthnNotConfigured');
    expectError(await t.http.post('/auth-api/passkeys/login/verify').set('svc-store-codename', store.codename).send({ response: answerFor('x') }), 404, 'WebAuthnNotConfigured');
    for (const [method, path] of [['post', '/auth-api/passkeys/register/options'], ['get', '/auth-api/passkeys']] as const) {
      expectError(await t.http[method](path).set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`), 404, 'WebAuthnNotConfigured');
    }
  });
});

describe('settings webauthn at boot', () => {
  it('is refused without rpId or origins', async () => {
    await expect(startApp({ settings: { webauthn: { rpName: 'x', origins: [ORIGIN] } as never } })).rejects.toThrow(/rpId/);
    await expect(startApp({ settings: { webauthn: { rpId: 'example.com', rpName: 'x', origins: [] } } })).rejects.toThrow(/origins/);
  });
});
