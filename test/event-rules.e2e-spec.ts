import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { EventPublisher } from '../src/delivery/broker/event-publisher.js';
import { RedisStreamsBroker } from '../src/delivery/broker/redis-streams-broker.js';
import { NotificationEntity } from '../src/delivery/notification/notification.entity.js';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { describeWithRedis, PASSWORD, registerStore, startApp, unique, waitFor, type RegisteredStore, type TestApp } from './helpers.js';
import { smtp, startMailServer, type MailServer } from './mail-server.js';

// Notification event rules read the broker: an event a backend team publishes through
// EventPublisher (or another process writes on the broker) triggers its rule, and with several
// replicas exactly one of them handles it.

const SETTINGS = {
  notifications: {
    defaultLanguage: 'en',
    providers: [],
    channels: [{ channelName: 'inApp' as const, providers: [], fallbackProviders: [] }],
    templates: [
      { templateName: 'welcome', channel: 'inApp' as const, language: 'en', subject: 'Welcome', body: 'Your account is ready.' },
      { templateName: 'invoice', channel: 'inApp' as const, language: 'en', subject: 'Invoice paid', body: 'We received {{amount}}.' },
    ],
    eventRules: [
      { eventName: 'user.created', template: 'welcome', channel: 'inApp' as const, recipient: 'event.userId', contextVars: {} },
      { eventName: 'billing-invoice-paid', template: 'invoice', channel: 'inApp' as const, recipient: 'event.customerId', contextVars: { amount: 'event.amount' } },
    ],
    worker: { concurrency: 5, maxAttempts: 3, backoffMs: 50 },
  },
} as never;

function rows(t: TestApp, storeId: string, template: string): Promise<NotificationEntity[]> {
  return t.app.get(DataSource).getRepository(NotificationEntity).findBy({ storeId, template });
}

// Exactly `n` rows, and still `n` once the other replicas had time to act too.
async function exactly(t: TestApp, storeId: string, template: string, n: number): Promise<NotificationEntity[]> {
  await waitFor(`${n} ${template} notifications`, async () => ((await rows(t, storeId, template)).length >= n ? true : undefined));
  await new Promise((r) => setTimeout(r, 1500));
  return rows(t, storeId, template);
}

describe('notification event rules on the broker', () => {
  let t: TestApp;
  let store: RegisteredStore;
  beforeAll(async () => {
    t = await startApp({ env: { SERVICE_CODENAME: unique('er') }, settings: SETTINGS });
    store = await registerStore(t.http);
  });
  afterAll(() => t?.close());

  it('an event a backend team publishes through EventPublisher triggers its rule: one notification, with the rule variables', async () => {
    await t.app.get(EventPublisher).publish('billing-invoice-paid', { invoiceId: 'inv-1', storeId: store.storeId, customerId: store.ownerId, amount: 42 });
    const [row] = await exactly(t, store.storeId, 'invoice', 1);
    expect(row).toMatchObject({ userId: store.ownerId, channel: 'inApp', template: 'invoice', contextVars: { amount: 42 } });
  });

  it('an event delivered twice (the same message id, as the outbox delivers an event again) notifies once', async () => {
    const publisher = t.app.get(EventPublisher);
    const id = randomUUID(); // a new one each run: PostgreSQL keeps the rows of earlier runs
    const again = { invoiceId: 'inv-twice', storeId: store.storeId, customerId: store.ownerId, amount: 99 };
    await publisher.publish('billing-invoice-paid', again, id);
    await publisher.publish('billing-invoice-paid', again, id);
    const twice = (await exactly(t, store.storeId, 'invoice', 2)).filter((r) => r.contextVars.amount === 99);
    expect(twice).toHaveLength(1);
  });

  it('user.created still reaches a rule reading event.userId (the broker payload is the user)', async () => {
    const welcome = await exactly(t, store.storeId, 'welcome', 1);
    expect(welcome.map((r) => r.userId)).toEqual([store.ownerId]);
  });
});

describeWithRedis('notification event rules on two replicas', 'the in-memory broker is one process by design', () => {
  let one: TestApp;
  let two: TestApp;
  let store: RegisteredStore;
  const service = unique('er');
  beforeAll(async () => {
    [one, two] = await Promise.all([startApp({ env: { SERVICE_CODENAME: service }, settings: SETTINGS }), startApp({ env: { SERVICE_CODENAME: service }, settings: SETTINGS })]);
    store = await registerStore(one.http);
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
  });

  it('one event published through EventPublisher on replica 1: exactly one notification, whichever replica handles it', async () => {
    await one.app.get(EventPublisher).publish('billing-invoice-paid', { invoiceId: 'inv-1', storeId: store.storeId, customerId: store.ownerId, amount: 7 });
    expect(await exactly(one, store.storeId, 'invoice', 1)).toHaveLength(1);
  });

  it('the store owner registered on replica 1 gets one welcome, not one per replica', async () => {
    expect((await exactly(two, store.storeId, 'welcome', 1)).map((r) => r.userId)).toEqual([store.ownerId]);
  });

  it('events written on the broker by another process trigger the rules too, each once', async () => {
    const other = new RedisStreamsBroker({ url: process.env.REDIS_URL!, prefix: `${one.config.env.PROJECT_CODENAME}:events:`, maxLen: 100 });
    try {
      for (let i = 0; i < 6; i++) await other.publish('billing-invoice-paid', { invoiceId: `far-${i}`, storeId: store.storeId, customerId: store.ownerId, amount: i });
    } finally {
      await other.close();
    }
    const got = await exactly(one, store.storeId, 'invoice', 7);
    expect(got.map((r) => r.contextVars.amount).sort()).toEqual([0, 1, 2, 3, 4, 5, 7]);
  });
});

// The example rule settings.default.json ships disabled: an email to the user when a sign-in
// comes from a device none of its other sessions uses. Enabled here as an operator would.
describe('the shipped example rule: email on a sign-in from a new device', () => {
  let t: TestApp;
  let mail: MailServer;
  const defaults = (JSON.parse(readFileSync(new URL('../config/settings.default.json', import.meta.url), 'utf8')) as { notifications: { templates: object[]; eventRules: { eventName: string; enabled?: boolean }[] } }).notifications;
  const example = defaults.eventRules.find((r) => r.eventName === 'audit:user.login.succeeded')!;

  beforeAll(async () => {
    mail = await startMailServer();
    t = await startApp({
      env: { SERVICE_CODENAME: unique('nd') },
      settings: {
        notifications: {
          ...defaults,
          providers: [smtp('mail', mail.port)],
          channels: [
            { channelName: 'inApp', providers: [], fallbackProviders: [] },
            { channelName: 'email', providers: ['mail'], fallbackProviders: [] },
          ],
          eventRules: [{ ...example, enabled: true }],
        },
      } as never,
    });
  });
  afterAll(async () => {
    await t?.close();
    await mail?.close();
  });

  it('ships disabled', () => {
    expect(example.enabled).toBe(false);
  });

  it('enabled: the first sign-in from a device sends one email naming it; the same device again sends none; another device sends one', async () => {
    const store = await registerStore(t.http);
    const signIn = (agent: string) => t.http.post('/auth-api/login').set('svc-store-codename', store.codename).set('User-Agent', agent).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    await signIn('Phone/1.0 (first)');
    await waitFor('the first email', async () => (mail.to(store.ownerEmail).length >= 1 ? true : undefined));
    await signIn('Phone/1.0 (first)');
    await signIn('Laptop/2.0 (second)');
    await waitFor('the second email', async () => (mail.to(store.ownerEmail).length >= 2 ? true : undefined));
    await t.app.get(AuditRecorderService).flush();
    await new Promise((r) => setTimeout(r, 1000));
    const sent = mail.to(store.ownerEmail);
    expect(sent).toHaveLength(2);
    expect(sent[0].mail.subject).toMatch(/New sign-in/);
    expect(sent.map((m) => m.mail.text ?? '')).toEqual([expect.stringContaining('Phone/1.0 (first)'), expect.stringContaining('Laptop/2.0 (second)')]);
  });
});
