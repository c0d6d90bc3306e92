import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ParsedMail } from 'mailparser';
import { DataSource } from 'typeorm';
import { FakeApi, type Received } from './fake-api.js';
import { smtp, startMailServer, type MailServer } from './mail-server.js';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, waitFor, type TestApp } from './helpers.js';

// The six flows in liveMode: the code (or link) reaches the user only through the channel. Mail
// goes through the real SMTP provider to a real SMTP server on 127.0.0.1; SMS through the Twilio
// SDK to a stand-in of its API. The test reads the code from what they received.

const HEADER = 'svc-store-codename';
const V = '/auth-api/verification-services';
const SID = 'AC0123456789abcdef0123456789abcdef';
const FRONTEND = 'https://app.example.test/base';
const NEW_PASSWORD = 'a brand new secret';

const form = (r: Received): Record<string, string> => Object.fromEntries(new URLSearchParams(r.text));
const twilio = new FakeApi((r) => ({ status: 201, body: { sid: `SM${'0'.repeat(32)}`, account_sid: SID, to: form(r).To, body: form(r).Body, status: 'queued', error_code: null } }));

describe('verification flows in liveMode, through a real SMTP server and the SMS API stand-in', () => {
  let t: TestApp;
  let mail: MailServer;

  beforeAll(async () => {
    [mail] = await Promise.all([startMailServer(), twilio.start()]);
    t = await startApp({
      env: { SERVICE_CODENAME: unique('v'), TWILIO_AUTH_TOKEN: 'tok' },
      settings: {
        secondaryIdentifierPresence: 'optional',
        email2FARequiredForLogin: true,
        mobile2FARequiredForLogin: true,
        verification: {
          verificationMode: 'liveMode',
          frontendUrl: FRONTEND,
          flows: {
            'email-verification': { enabled: true, verificationType: 'byLink' },
            'mobile-verification': { enabled: true },
            'password-reset-by-email': { enabled: true },
            'password-reset-by-mobile': { enabled: true },
            'email-2factor-verification': { enabled: true },
            'mobile-2factor-verification': { enabled: true },
          },
        },
        notifications: {
          providers: [smtp('mail', mail.port), { providerName: 'twilio', providerType: 'twilio', providerSettings: { accountSid: SID, authToken: { env: 'TWILIO_AUTH_TOKEN' }, from: '+15005550006', apiBaseUrl: twilio.url } }],
          channels: [
            { channelName: 'email', providers: ['mail'], fallbackProviders: [] },
            { channelName: 'sms', providers: ['twilio'], fallbackProviders: [] },
            { channelName: 'inApp', providers: [], fallbackProviders: [] },
          ],
          // The shipped English templates stay; a Turkish reset mail is added by settings, and
          // the welcome keeps other suites' queued rows deliverable here.
          templates: [
            { templateName: 'passwordResetByEmail', channel: 'email', language: 'tr', subject: 'Şifre sıfırlama', body: '<p>Kodunuz: <b>{{code}}</b></p>' },
            { templateName: 'welcome', channel: 'inApp', language: 'en', subject: 'Welcome', body: 'Ready.' },
          ],
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

  async function registerUser() {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    const mobile = `+1415555${randomInt(1000, 10000)}`;
    const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, mobile, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
    return { id: res.body.user.id as string, email, mobile, store };
  }

  // The n-th message to the address (1-based), once it has arrived.
  const nthMail = (address: string, n = 1): Promise<ParsedMail> => waitFor(`mail ${n} to ${address}`, () => mail.to(address)[n - 1]?.mail);
  const nthSms = (to: string, n = 1): Promise<string> => waitFor(`sms ${n} to ${to}`, () => twilio.requests.map(form).filter((f) => f.To === to)[n - 1]?.Body);
  const codeIn = (text: string): string => /\b(\d{6})\b/.exec(text)![1];

  function start(codename: string, flow: string, body: object, token?: string) {
    const req = t.http.post(`${V}/${flow}/start`).set(HEADER, codename).send(body);
    return token ? req.set('Authorization', `Bearer ${token}`) : req;
  }

  function complete(codename: string, flow: string, body: object, token?: string) {
    const req = t.http.post(`${V}/${flow}/complete`).set(HEADER, codename).send(body);
    return token ? req.set('Authorization', `Bearer ${token}`) : req;
  }

  it('email-verification by link: the mail carries {frontendUrl}/emailVerification/{token}; the token alone completes it', async () => {
    const user = await registerUser();
    const started = await start(user.store.codename, 'email-verification', { email: user.email }).expect(200);
    expect(started.body).toMatchObject({ status: 'OK', codeIndex: 1, verificationType: 'byLink' });
    expect(started.body.secretCode).toBeUndefined();

    const message = await nthMail(user.email);
    expect(message.subject).toBe('Verify your email address');
    const link = new RegExp(`${FRONTEND}/emailVerification/([A-Za-z0-9_-]+)`).exec(message.html || '');
    expect(link).not.toBeNull();
    const token = link![1];
    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16); // at least 128 bits
    // the token of one store is nothing in another
    const other = await registerStore(t.http);
    expectError(await complete(other.codename, 'email-verification', { secretCode: token }), 403, 'VerificationCodeInvalid');

    const done = await complete(user.store.codename, 'email-verification', { secretCode: token }).expect(200);
    expect(done.body).toEqual({ status: 'OK', isVerified: true, email: user.email });
    expectError(await complete(user.store.codename, 'email-verification', { secretCode: token }), 403, 'VerificationCodeInvalid');
  });

  it('mobile-verification: the code arrives by SMS', async () => {
    const user = await registerUser();
    await start(user.store.codename, 'mobile-verification', { mobile: user.mobile }).expect(200);
    const sms = await nthSms(user.mobile);
    expect(sms).toMatch(/^\d{6} is your code to verify your mobile number \(.+\)\. It expires in 10 minutes\.$/);
    const done = await complete(user.store.codename, 'mobile-verification', { mobile: user.mobile, secretCode: codeIn(sms) }).expect(200);
    expect(done.body).toEqual({ status: 'OK', isVerified: true, mobile: user.mobile });
  });

  it('password-reset-by-email: code by mail, then a "password changed" mail; codes never stay in the rows', async () => {
    const user = await registerUser();
    const started = await start(user.store.codename, 'password-reset-by-email', { email: user.email }).expect(200);
    expect(started.body.secretCode).toBeUndefined();
    const message = await nthMail(user.email);
    expect(message.subject).toBe('Reset your password');
    const code = codeIn(message.text || '');
    await complete(user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: code, password: NEW_PASSWORD }).expect(200);
    const changed = await nthMail(user.email, 2);
    expect(changed.subject).toBe('Your password was changed');
    await login(t.http, user.email, NEW_PASSWORD, user.store.codename);

    const db = t.app.get(DataSource);
    const rows = await waitFor('the notifications to settle', async () => {
      const r = (await db.query('SELECT * FROM notifications WHERE "storeId" = $1', [user.store.storeId])) as { status: string }[];
      return r.length >= 2 && r.every((n) => n.status === 'delivered') ? r : undefined;
    });
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(JSON.stringify(await db.query('SELECT * FROM verification_codes WHERE "storeId" = $1', [user.store.storeId]))).not.toContain(code);
  });

  it('password-reset-by-email in the user’s language when a template exists for it', async () => {
    const user = await registerUser();
    await t.app.get(DataSource).query('UPDATE users SET language = $1 WHERE id = $2', ['tr', user.id]);
    await start(user.store.codename, 'password-reset-by-email', { email: user.email }).expect(200);
    const message = await nthMail(user.email);
    expect(message.subject).toBe('Şifre sıfırlama');
    await complete(user.store.codename, 'password-reset-by-email', { email: user.email, secretCode: codeIn(message.text || ''), password: NEW_PASSWORD }).expect(200);
  });

  it('password-reset-by-mobile: code by SMS, then a "password changed" SMS', async () => {
    const user = await registerUser();
    await start(user.store.codename, 'password-reset-by-mobile', { mobile: user.mobile }).expect(200);
    const sms = await nthSms(user.mobile);
    await complete(user.store.codename, 'password-reset-by-mobile', { mobile: user.mobile, secretCode: codeIn(sms), password: NEW_PASSWORD }).expect(200);
    expect(await nthSms(user.mobile, 2)).toMatch(/password of your .+ account was just changed/);
    await login(t.http, user.email, NEW_PASSWORD, user.store.codename);
  });

  it('an unknown identifier: the same answer, and nothing is sent', async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    const res = await start(store.codename, 'password-reset-by-email', { email }).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['codeIndex', 'date', 'expireTime', 'status', 'timeStamp', 'verificationType']);
    const mobile = `+1415555${randomInt(1000, 10000)}`;
    await start(store.codename, 'password-reset-by-mobile', { mobile }).expect(200);
    // a known user's message, started after, arrives; the unknown ones never do
    const user = await registerUser();
    await start(user.store.codename, 'password-reset-by-email', { email: user.email }).expect(200);
    await nthMail(user.email);
    expect(mail.to(email)).toHaveLength(0);
    expect(twilio.requests.map(form).filter((f) => f.To === mobile)).toHaveLength(0);
  });

  it('email and mobile second factors: codes by mail and SMS, the session answered without the flags', async () => {
    const user = await registerUser();
    const session = await login(t.http, user.email, PASSWORD, user.store.codename);
    expect(session.body).toMatchObject({ sessionNeedsEmail2FA: true, sessionNeedsMobile2FA: true });

    const started = await start(user.store.codename, 'email-2factor-verification', {}, session.accessToken).expect(200);
    expect(started.body.secretCode).toBeUndefined();
    const message = await nthMail(user.email);
    expect(message.subject).toBe('Your sign-in code');
    const afterEmail = await complete(user.store.codename, 'email-2factor-verification', { secretCode: codeIn(message.text || '') }, session.accessToken).expect(200);
    expect(afterEmail.body).toMatchObject({ sessionId: session.sessionId, sessionNeedsMobile2FA: true });

    await start(user.store.codename, 'mobile-2factor-verification', {}, session.accessToken).expect(200);
    const sms = await nthSms(user.mobile);
    const afterMobile = await complete(user.store.codename, 'mobile-2factor-verification', { secretCode: codeIn(sms) }, session.accessToken).expect(200);
    expect(afterMobile.body).toMatchObject({ sessionId: session.sessionId, accessToken: expect.any(String) });
    expect(afterMobile.body.sessionNeedsEmail2FA).toBeUndefined();
    expect(afterMobile.body.sessionNeedsMobile2FA).toBeUndefined();
    await t.http.get('/auth-api/sessions').set(HEADER, user.store.codename).set('Authorization', `Bearer ${afterMobile.body.accessToken}`).expect(200);
  });
});

describe('boot refuses verification settings that cannot work', () => {
  it.each<[string, Parameters<typeof startApp>[0], string]>([
    ['a flow required for login but not enabled', { settings: { emailVerificationRequiredForLogin: true } }, 'settings.emailVerificationRequiredForLogin: needs settings.verification.flows.email-verification.enabled'],
    [
      'a liveMode flow without its channel',
      { settings: { verification: { flows: { 'password-reset-by-email': { enabled: true } } } } },
      'settings.verification.flows.password-reset-by-email: liveMode needs the notification channel email',
    ],
    [
      'a mobile flow where users have no mobile',
      { settings: { verification: { verificationMode: 'testMode', flows: { 'mobile-verification': { enabled: true } } } } },
      'settings.verification.flows.mobile-verification: users have no mobile',
    ],
    [
      'a template that does not exist',
      { settings: { verification: { verificationMode: 'testMode', flows: { 'email-verification': { enabled: true, verificationTemplate: 'nope' } } } } },
      'settings.verification.flows.email-verification.verificationTemplate: no email template nope',
    ],
    ['testMode in production', { env: { NODE_ENV: 'production' }, settings: { verification: { verificationMode: 'testMode' } } }, 'testMode returns codes in answers and is refused in production'],
  ])('%s', async (_case, opts, message) => {
    const error = await startApp(opts).then(
      async (app) => {
        await app.close();
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain(message);
  });
});
