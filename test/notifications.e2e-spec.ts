import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ParsedMail } from 'mailparser';
import { DataSource } from 'typeorm';
import { AppError } from '../src/kernel/errors.js';
import type { ChannelSetting, EventRuleSetting, ProviderSetting, TemplateSetting } from '../src/delivery/notification/notification.settings.js';
import type { SettingsOverrides } from '../src/settings.js';
import { NotificationEntity } from '../src/delivery/notification/notification.entity.js';
import { NotificationService, type SendRequest } from '../src/delivery/notification/notification.service.js';
import { NotificationWorker } from '../src/delivery/notification/notification.worker.js';
import { addressesOf, closedPort, smtp, startMailServer, type MailServer } from './mail-server.js';
import { login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp, waitFor, updateStoreRow, expectSocketsReleased, openSockets } from './helpers.js';

// Email notifications end to end: the real worker and the real SMTP provider (nodemailer)
// deliver to a real SMTP server on 127.0.0.1, whose received messages are parsed and checked.
// Works on both queues: in process, and BullMQ when REDIS_URL is set (each app here has its own
// SERVICE_CODENAME, hence its own queue prefix, so no other app takes its jobs).

const HEADER = 'svc-store-codename';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WORKER = { concurrency: 5, maxAttempts: 3, backoffMs: 30 };

// ---------------------------------------------------------------- settings and apps

const VERIFY_TEMPLATES: TemplateSetting[] = [
  { templateName: 'verify', channel: 'email', language: 'en', subject: 'Verify, {{user.fullname}}', body: '<p>Hello {{user.fullname}}, your code is <b>{{code}}</b>.</p>' },
  { templateName: 'verify', channel: 'email', language: 'tr', subject: 'Doğrulama, {{user.fullname}}', body: '<p>Merhaba {{user.fullname}}, kodunuz <b>{{code}}</b>.</p>' },
];

// The shipped in-app welcome, kept in every app here: a worker's sweep re-enqueues old queued
// rows of the whole (shared) database, so another suite's welcome row may reach one of these
// apps, which must then deliver it as the shipped settings would, not fail it.
const INAPP_CHANNEL: ChannelSetting = { channelName: 'inApp', providers: [], fallbackProviders: [] };
const INAPP_WELCOME: TemplateSetting = {
  templateName: 'welcome',
  channel: 'inApp',
  language: 'en',
  subject: 'Welcome, {{user.fullname}}',
  body: 'Your account in {{store.fullname}} is ready.',
};

interface NotificationConfig {
  providers: ProviderSetting[];
  email: { providers: string[]; fallbackProviders?: string[] };
  templates?: TemplateSetting[];
  eventRules?: EventRuleSetting[];
}

function settingsFor(c: NotificationConfig): SettingsOverrides {
  return {
    notifications: {
      defaultLanguage: 'en',
      providers: c.providers,
      channels: [{ channelName: 'email', providers: c.email.providers, fallbackProviders: c.email.fallbackProviders ?? [] }, INAPP_CHANNEL],
      templates: [...(c.templates ?? VERIFY_TEMPLATES), INAPP_WELCOME],
      eventRules: c.eventRules ?? [],
      worker: WORKER,
    },
  };
}

// Its own SERVICE_CODENAME: with REDIS_URL, its own BullMQ queue.
function start(c: NotificationConfig): Promise<TestApp> {
  return startApp({ env: { SERVICE_CODENAME: unique('n') }, settings: settingsFor(c) });
}

// ---------------------------------------------------------------- polling, rows, users

function row(t: TestApp, id: string): Promise<NotificationEntity | null> {
  return t.app.get(DataSource).getRepository(NotificationEntity).findOneBy({ id });
}

// The row once it is no longer queued.
function settled(t: TestApp, id: string): Promise<NotificationEntity> {
  return waitFor(`notification ${id} to settle`, async () => {
    const n = await row(t, id);
    return n && n.status !== 'queued' ? n : undefined;
  });
}

function mailTo(server: MailServer, address: string): Promise<ParsedMail> {
  return waitFor(`a mail to ${address}`, () => server.to(address)[0]?.mail);
}

interface User {
  id: string;
  email: string;
  store: RegisteredStore;
}

// A user registered in `store` (a fresh store when none is given).
async function registerUser(t: TestApp, opts: { store?: RegisteredStore; fullname?: string } = {}): Promise<User> {
  const store = opts.store ?? (await registerStore(t.http));
  const email = uniqueEmail();
  const res = await t.http
    .post('/auth-api/v1/registerstoreuser')
    .set(HEADER, store.codename)
    .send({ email, password: PASSWORD, fullname: opts.fullname ?? 'Ada Lovelace' })
    .expect(201);
  return { id: res.body.user.id, email, store };
}

async function setLanguages(t: TestApp, user: User, languages: { user?: string | null; store?: string | null }): Promise<void> {
  const db = t.app.get(DataSource);
  if (languages.user !== undefined) await db.query(`UPDATE "users" SET "language" = $1 WHERE "id" = $2`, [languages.user, user.id]);
  if (languages.store !== undefined) await updateStoreRow([t], user.store.storeId, { language: languages.store });
}

function sendVerify(t: TestApp, user: User, extra: Partial<SendRequest> = {}): Promise<string> {
  return t.app.get(NotificationService).send({ storeId: user.store.storeId, channel: 'email', template: 'verify', userId: user.id, secretVars: { code: '123456' }, ...extra });
}

// ---------------------------------------------------------------- the suites

describe('email notifications through a real SMTP server', () => {
  let mail: MailServer;
  let rejecting: MailServer;
  let main: TestApp;
  let fallback: TestApp;
  let failing: TestApp;
  let permanent: TestApp;
  beforeAll(async () => {
    [mail, rejecting] = await Promise.all([startMailServer(), startMailServer({ rejectRecipients: true })]);
    const broken = smtp('broken', await closedPort());
    // Every app up front, so none starts (and sweeps) mid-test; one after the other: boots in
    // parallel on the embedded database failed ("unnamed prepared statement does not exist").
    main = await start({ providers: [smtp('mail', mail.port), broken], email: { providers: ['mail'] } });
    fallback = await start({ providers: [smtp('mail', mail.port), broken], email: { providers: ['broken'], fallbackProviders: ['mail'] } });
    failing = await start({ providers: [broken], email: { providers: ['broken'] } });
    permanent = await start({ providers: [smtp('reject', rejecting.port)], email: { providers: ['reject'] } });
  });
  afterAll(async () => {
    await Promise.all([main, fallback, failing, permanent].filter(Boolean).map((t) => t.close()));
    await Promise.all([mail, rejecting].filter(Boolean).map((s) => s.close()));
  });

  describe('send() and delivery', () => {
    it('returns the new id at once; the worker delivers the rendered mail and erases the secret', async () => {
      const user = await registerUser(main, { fullname: 'Ada Lovelace' });
      const id = await sendVerify(main, user);
      expect(id).toMatch(UUID);
      const created = await row(main, id);
      expect(created).toMatchObject({ id, storeId: user.store.storeId, userId: user.id, channel: 'email', template: 'verify' });
      expect(['queued', 'delivered']).toContain(created!.status);

      const received = await mailTo(mail, user.email);
      expect(received.subject).toBe('Verify, Ada Lovelace');
      expect((received.html || '').trim()).toBe('<p>Hello Ada Lovelace, your code is <b>123456</b>.</p>');
      expect(addressesOf(received.to)).toEqual([user.email.toLowerCase()]);
      expect(addressesOf(received.from)).toEqual(['no-reply@example.test']);
      expect(received.messageId).toContain(id);

      const n = await settled(main, id);
      expect(n.status).toBe('delivered');
      expect(n.deliveredBy).toBe('mail');
      expect(n.deliveredAt).toBeInstanceOf(Date);
      expect(n.attempts).toEqual([{ provider: 'mail', outcome: 'delivered', at: expect.any(String) }]);
      expect(n.secretVars).toBeNull();
      // nothing of the message (which carried the code) is kept for an email
      expect(n.content).toBeNull();
      expect(JSON.stringify(n)).not.toContain('123456');
    });

    it('exactly once: the job run again for a delivered id sends nothing more', async () => {
      const user = await registerUser(main);
      const id = await sendVerify(main, user);
      await mailTo(mail, user.email);
      const before = await settled(main, id);
      expect(before.status).toBe('delivered');

      // what a redelivered queue job does: the row is delivered already, so nothing is sent
      await main.app.get(NotificationWorker).deliver(id, 2, 3);
      await main.app.get(NotificationWorker).deliver(id, 3, 3);
      // a message sent by the calls above would have been accepted before they returned
      expect(mail.to(user.email)).toHaveLength(1);
      const after = await row(main, id);
      expect(after).toMatchObject({ status: 'delivered', deliveredBy: 'mail' });
      expect(after!.attempts).toEqual(before.attempts);
    });

    it('an email is not an inbox item: marking it read is a 404 and leaves the row as it was', async () => {
      const user = await registerUser(main);
      const id = await sendVerify(main, user);
      // the id travels in the Message-ID, so the recipient knows it
      expect((await mailTo(mail, user.email)).messageId).toContain(id);
      await settled(main, id);
      const session = await login(main.http, user.email, PASSWORD, user.store.codename);
      await main.http.post(`/notifications/${id}/read`).set(HEADER, user.store.codename).set('Authorization', `Bearer ${session.accessToken}`).expect(404);
      expect((await row(main, id))!.readAt).toBeNull();
    });

    it('escapes variables in the HTML body of an email', async () => {
      const user = await registerUser(main, { fullname: '<script>alert(1)</script>' });
      await sendVerify(main, user);
      const received = await mailTo(mail, user.email);
      expect(received.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(received.html).not.toContain('<script>');
    });

    it('keeps the subject plain text: a name with an apostrophe or ampersand arrives as written', async () => {
      const user = await registerUser(main, { fullname: `O'Brien & Sons` });
      await sendVerify(main, user);
      const received = await mailTo(mail, user.email);
      // a mail header is not HTML: entities would show as such in the reader's inbox
      expect(received.subject).toBe(`Verify, O'Brien & Sons`);
      expect(received.html).toContain('O&#x27;Brien &amp; Sons');
    });
  });

  describe('template language', () => {
    async function languageOf(languages: { user?: string | null; store?: string | null }, acceptLanguage?: string): Promise<string> {
      const user = await registerUser(main, { fullname: 'Deniz' });
      await setLanguages(main, user, languages);
      await sendVerify(main, user, acceptLanguage ? { acceptLanguage } : {});
      const subject = (await mailTo(mail, user.email)).subject;
      if (subject === 'Doğrulama, Deniz') return 'tr';
      if (subject === 'Verify, Deniz') return 'en';
      throw new Error(`unexpected subject ${subject}`);
    }

    it("the user's own language comes first, before the store's and the request's", async () => {
      expect(await languageOf({ user: 'tr', store: 'en' }, 'en')).toBe('tr');
    });

    it("without a user language, the store's, before the request's", async () => {
      expect(await languageOf({ user: null, store: 'tr' }, 'en')).toBe('tr');
      expect(await languageOf({ user: null, store: 'en' }, 'tr')).toBe('en');
    });

    it('with neither, the Accept-Language of the request (tr-TR,tr;q=0.9 → tr)', async () => {
      expect(await languageOf({ user: null, store: null }, 'tr-TR,tr;q=0.9')).toBe('tr');
    });

    it('a language without the template falls back to the default language', async () => {
      expect(await languageOf({ user: 'de', store: 'de' }, 'de-DE,de;q=0.9')).toBe('en');
      expect(await languageOf({ user: null, store: null })).toBe('en');
    });
  });

  describe('providers, fallbacks and retries', () => {
    it('a failing primary provider is followed by the fallback, which delivers', async () => {
      const user = await registerUser(fallback);
      const id = await sendVerify(fallback, user);
      const received = await mailTo(mail, user.email);
      expect(received.subject).toBe('Verify, Ada Lovelace');
      const n = await settled(fallback, id);
      expect(n).toMatchObject({ status: 'delivered', deliveredBy: 'mail', secretVars: null });
      expect(n.attempts).toEqual([
        { provider: 'broken', outcome: 'failed', error: expect.any(String), permanent: false, at: expect.any(String) },
        { provider: 'mail', outcome: 'delivered', at: expect.any(String) },
      ]);
    });

    it('all providers failing: retried with growing gaps, then failed after maxAttempts, secret erased', async () => {
      const user = await registerUser(failing);
      const id = await sendVerify(failing, user);
      const n = await settled(failing, id);
      expect(n.status).toBe('failed');
      expect(n.deliveredBy).toBeNull();
      expect(n.secretVars).toBeNull();
      expect(n.attempts).toHaveLength(WORKER.maxAttempts);
      for (const attempt of n.attempts) {
        expect(attempt).toEqual({ provider: 'broken', outcome: 'failed', error: expect.any(String), permanent: false, at: expect.any(String) });
      }
      // backoff 30 ms, doubling, jitter 0.5–1.5: at least 15 ms, then 30 ms between attempts
      const times = n.attempts.map((a) => Date.parse(a.at));
      expect(times[1] - times[0]).toBeGreaterThanOrEqual(10);
      expect(times[2] - times[1]).toBeGreaterThanOrEqual(10);
      expect(mail.to(user.email)).toHaveLength(0);
    });

    it('a permanent refusal (550 on RCPT TO) fails after one attempt, without retries', async () => {
      const user = await registerUser(permanent);
      const id = await sendVerify(permanent, user);
      const n = await settled(permanent, id);
      expect(n.status).toBe('failed');
      expect(n.secretVars).toBeNull();
      // failed at the first attempt (a failed row is final: a later job finds nothing to do)
      expect(n.attempts).toEqual([{ provider: 'reject', outcome: 'failed', error: expect.stringContaining('550'), permanent: true, at: expect.any(String) }]);
      expect(rejecting.received).toHaveLength(0);
    });
  });

  describe('send() validation', () => {
    it('an unconfigured channel: ValidationFailed', async () => {
      const user = await registerUser(main);
      const send = main.app.get(NotificationService).send({ storeId: user.store.storeId, channel: 'sms', template: 'verify', userId: user.id });
      await expect(send).rejects.toBeInstanceOf(AppError);
      await expect(send).rejects.toMatchObject({ errCode: 'ValidationFailed', status: 400 });
    });

    it('an unknown template, or one without a version for the channel: ValidationFailed', async () => {
      const user = await registerUser(main);
      const service = main.app.get(NotificationService);
      await expect(service.send({ storeId: user.store.storeId, channel: 'email', template: 'nope', userId: user.id })).rejects.toMatchObject({ errCode: 'ValidationFailed' });
      await expect(service.send({ storeId: user.store.storeId, channel: 'inApp', template: 'verify', userId: user.id })).rejects.toMatchObject({ errCode: 'ValidationFailed' });
    });

    it('neither a user nor a recipient address: ValidationFailed', async () => {
      const store = await registerStore(main.http);
      await expect(main.app.get(NotificationService).send({ storeId: store.storeId, channel: 'email', template: 'verify' })).rejects.toMatchObject({
        errCode: 'ValidationFailed',
      });
    });
  });
});

describe('event rules', () => {
  let mail: MailServer;
  let t: TestApp;
  beforeAll(async () => {
    mail = await startMailServer();
    t = await start({
      providers: [smtp('mail', mail.port)],
      email: { providers: ['mail'] },
      templates: [
        { templateName: 'welcome', channel: 'email', language: 'en', subject: 'Welcome, {{user.fullname}}', body: '<p>Welcome to {{store.name}} (via {{source}}).</p>' },
      ],
      eventRules: [{ eventName: 'user.created', template: 'welcome', channel: 'email', recipient: 'event.userId', contextVars: { source: '"signup"' } }],
    });
  });
  afterAll(async () => {
    await t?.close();
    await mail?.close();
  });

  it('user.created → a welcome mail to the new user, with the rule variables', async () => {
    const store = await registerStore(t.http, { store: { name: 'Rule Store' } });
    const user = await registerUser(t, { store, fullname: 'Grace Hopper' });
    const received = await mailTo(mail, user.email);
    expect(received.subject).toBe('Welcome, Grace Hopper');
    expect((received.html || '').trim()).toBe('<p>Welcome to Rule Store (via signup).</p>');

    const rows = await t.app.get(DataSource).getRepository(NotificationEntity).findBy({ storeId: store.storeId, userId: user.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ channel: 'email', template: 'welcome', contextVars: { source: 'signup' } });
    // the store owner's registration is a user.created too
    await mailTo(mail, store.ownerEmail);
  });
});

describe('notification settings are checked at boot', () => {
  const provider = smtp('mail', 2525);
  const email = { providers: ['mail'] };


  async function refused(c: NotificationConfig, named: RegExp): Promise<void> {
    const sockets = openSockets();
    await expect(start(c)).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(named) });
    // the refused app released the database pool (and Redis) it had opened
    await expectSocketsReleased(sockets);
  }

  it('an event rule whose CEL does not compile: ConfigError naming the rule', async () => {
    await refused(
      {
        providers: [provider],
        email,
        templates: [...VERIFY_TEMPLATES, { templateName: 'welcome', channel: 'email', language: 'en', subject: 'Hi', body: 'Hi' }],
        eventRules: [{ eventName: 'user.created', template: 'welcome', channel: 'email', recipient: 'event.userId +', contextVars: {} }],
      },
      /eventRules: user\.created → welcome: recipient does not compile/,
    );
  });

  it('a rule variable whose CEL does not compile: ConfigError naming the variable', async () => {
    await refused(
      {
        providers: [provider],
        email,
        eventRules: [{ eventName: 'user.created', template: 'verify', channel: 'email', recipient: 'event.userId', contextVars: { source: '"unterminated' } }],
      },
      /eventRules: user\.created → verify: contextVars\.source does not compile/,
    );
  });

  it('a template that does not compile: ConfigError naming the template', async () => {
    await refused(
      { providers: [provider], email, templates: [{ templateName: 'broken', channel: 'email', language: 'en', subject: 'x', body: '{{#if}}' }] },
      /templates: broken \(email, en\) does not compile/,
    );
  });

  // A provider's SDK is loaded at boot only when a provider of its type is configured: its own
  // checks at construction still refuse the boot.
  it('a Twilio provider whose account SID the SDK refuses: ConfigError naming the provider', async () => {
    const sms: ProviderSetting = { providerName: 'sms', providerType: 'twilio', providerSettings: { accountSid: 'XX0123456789abcdef0123456789abcdef', authToken: 'token', from: '+15005550006' } };
    await refused({ providers: [provider, sms], email }, /providers: sms: accountSid must start with AC/);
  });

  it('a OneSignal provider without its appId: ConfigError naming the provider', async () => {
    const push: ProviderSetting = { providerName: 'push', providerType: 'onesignal', providerSettings: { restApiKey: 'key' } };
    await refused({ providers: [provider, push], email }, /providers: push: provider push: providerSettings\.appId is required/);
  });

  it('an SMTP provider without its host: ConfigError naming the provider', async () => {
    const mail2: ProviderSetting = { providerName: 'mail2', providerType: 'smtp', providerSettings: { from: 'service@example.com' } };
    await refused({ providers: [provider, mail2], email }, /providers: mail2: provider mail2: providerSettings\.host is required/);
  });

  it('a channel naming an unknown provider: ConfigError', async () => {
    await refused({ providers: [provider], email: { providers: ['mail'], fallbackProviders: ['ghost'] } }, /channels: email names unknown providers ghost/);
  });
});
