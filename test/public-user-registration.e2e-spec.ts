import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, randomMobile, type TestApp } from './helpers.js';

// POST /auth-api/users opened by userRegisterIsPublic is a registration: its answer carries the
// same verification flags as the register routes, so the client starts those flows next. An
// administrator creating a user is not registering: no flags.

const HEADER = 'svc-store-codename';
const USERS = '/auth-api/users';


describe('POST /auth-api/users as a public registration (userRegisterIsPublic, verification flows on)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      settings: {
        userRegisterIsPublic: true,
        secondaryIdentifierPresence: 'optional',
        verification: { verificationMode: 'testMode', flows: { 'email-verification': { enabled: true }, 'mobile-verification': { enabled: true } } },
      },
    });
  });
  afterAll(() => t.close());

  it('without a token: emailVerificationNeeded and mobileVerificationNeeded, as registerstoreuser answers', async () => {
    const store = await registerStore(t.http);
    const res = await t.http.post(USERS).set(HEADER, store.codename).send({ email: uniqueEmail(), mobile: randomMobile(), password: PASSWORD, fullname: 'Walk In' }).expect(201);
    expect(res.body).toMatchObject({ status: 'OK', dataName: 'user', action: 'create', emailVerificationNeeded: true, mobileVerificationNeeded: true, user: { emailVerified: false, mobileVerified: false } });
    const registered = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email: uniqueEmail(), mobile: randomMobile(), password: PASSWORD, fullname: 'Walk In' }).expect(201);
    expect(registered.body).toMatchObject({ emailVerificationNeeded: true, mobileVerificationNeeded: true });

    // no mobile given: no mobile flow to start
    const emailOnly = await t.http.post(USERS).set(HEADER, store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Email Only' }).expect(201);
    expect(emailOnly.body.emailVerificationNeeded).toBe(true);
    expect(emailOnly.body).not.toHaveProperty('mobileVerificationNeeded');
  });

  it('with a tenantUser token (the route is open only through the setting): the same flags', async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    await t.http.post(USERS).set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Member' }).expect(201);
    const member = await login(t.http, email, PASSWORD, store.codename);
    const res = await t.http.post(USERS).set(HEADER, store.codename).set('Authorization', `Bearer ${member.accessToken}`).send({ email: uniqueEmail(), mobile: randomMobile(), password: PASSWORD, fullname: 'Friend' }).expect(201);
    expect(res.body).toMatchObject({ emailVerificationNeeded: true, mobileVerificationNeeded: true });
  });

  it('an administrator creating a user: no verification flags', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const res = await t.http.post(USERS).set(HEADER, store.codename).set('Authorization', `Bearer ${owner.accessToken}`).send({ email: uniqueEmail(), mobile: randomMobile(), password: PASSWORD, fullname: 'Staff' }).expect(201);
    expect(res.body).toMatchObject({ dataName: 'user', userId: store.ownerId });
    expect(res.body).not.toHaveProperty('emailVerificationNeeded');
    expect(res.body).not.toHaveProperty('mobileVerificationNeeded');
  });
});
