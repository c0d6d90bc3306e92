import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SettingsOverrides } from '../src/settings.js';
import { expectError, itIf, login, PASSWORD, registerStore, startApp, type TestApp } from './helpers.js';

// Two instances on one database (and one Redis when REDIS_URL is set), as replicas behind a
// load balancer: a flow started on one completes on the other, and what a completion changes
// is seen by both at once.

const HEADER = 'svc-store-codename';
const V = '/auth-api/verification-services';
const CURRENT = '/auth-api/currentuser';

const SETTINGS: SettingsOverrides = {
  email2FARequiredForLogin: true,
  verification: {
    verificationMode: 'testMode',
    flows: { 'email-verification': { enabled: true }, 'password-reset-by-email': { enabled: true }, 'email-2factor-verification': { enabled: true } },
  },
};

// Without Redis each instance keeps its own session cache (by design): a cached copy on the
// other instance outlives a change made on this one.
const withRedis = itIf(process.env.REDIS_URL, 'needs REDIS_URL: in-process session caches are per instance');

describe('verification across two replicas', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startApp({ settings: SETTINGS });
    b = await startApp({ settings: SETTINGS });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('a code sent by A completes on B, once', async () => {
    const store = await registerStore(a.http);
    const started = await a.http.post(`${V}/email-verification/start`).set(HEADER, store.codename).send({ email: store.ownerEmail }).expect(200);
    const body = { email: store.ownerEmail, secretCode: started.body.secretCode };
    await b.http.post(`${V}/email-verification/complete`).set(HEADER, store.codename).send(body).expect(200);
    expectError(await a.http.post(`${V}/email-verification/complete`).set(HEADER, store.codename).send(body), 403, 'VerificationCodeInvalid');
  });

  withRedis('a second factor completed on A opens the routes on B at once', async () => {
    const store = await registerStore(a.http);
    const session = await login(a.http, store.ownerEmail, PASSWORD, store.codename);
    const bearer = `Bearer ${session.accessToken}`;
    // B has seen (and cached) the pending session
    expectError(await b.http.get('/auth-api/sessions').set(HEADER, store.codename).set('Authorization', bearer), 403, 'EmailTwoFactorNeeded');
    const started = await a.http.post(`${V}/email-2factor-verification/start`).set(HEADER, store.codename).set('Authorization', bearer).expect(200);
    const done = await a.http.post(`${V}/email-2factor-verification/complete`).set(HEADER, store.codename).set('Authorization', bearer).send({ secretCode: started.body.secretCode }).expect(200);
    // the completion answers the finished sign-in's tokens; the pending token stays refused
    await b.http.get('/auth-api/sessions').set(HEADER, store.codename).set('Authorization', `Bearer ${done.body.accessToken}`).expect(200);
    expectError(await b.http.get('/auth-api/sessions').set(HEADER, store.codename).set('Authorization', bearer), 401, 'AccessTokenPending');
  });

  withRedis("a password reset on A ends the user's sessions on B at once", async () => {
    const store = await registerStore(a.http);
    const session = await login(b.http, store.ownerEmail, PASSWORD, store.codename);
    await b.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${session.accessToken}`).expect(200);
    const started = await a.http.post(`${V}/password-reset-by-email/start`).set(HEADER, store.codename).send({ email: store.ownerEmail }).expect(200);
    await a.http
      .post(`${V}/password-reset-by-email/complete`)
      .set(HEADER, store.codename)
      .send({ email: store.ownerEmail, secretCode: started.body.secretCode, password: 'a brand new secret' })
      .expect(200);
    const me = await b.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', `Bearer ${session.accessToken}`);
    expect({ status: me.status, body: me.body }).toEqual({ status: 401, body: { status: 'ERR', message: 'No login found' } });
  });
});
