import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DeliveryAttempt } from '../src/delivery/notification/notification.entity.js';
import { NotificationService, type SendRequest } from '../src/delivery/notification/notification.service.js';
import { ProviderRegistry, type ProviderPlacement } from '../src/delivery/notification/provider-registry.js';
import { ProviderError, type NotificationProvider, type OutgoingMessage } from '../src/delivery/notification/providers/provider.js';
import type { SettingsOverrides } from '../src/settings.js';
import { PASSWORD, registerStore, startApp, unique, uniqueEmail, type TestApp, waitFor } from './helpers.js';

// Delivery providers an extension registers in code (providers/provider.ts's interface), beside or
// instead of the settings' SMTP, Twilio and OneSignal: the real worker hands them the rendered
// message.

const HEADER = 'svc-store-codename';

// A delivery service of an extension's own: keeps what it is handed, or refuses it.
class RecordingProvider implements NotificationProvider {
  readonly type = 'recording';
  readonly sent: OutgoingMessage[] = [];
  refuse = false;

  constructor(readonly name: string) {}

  async send(message: OutgoingMessage): Promise<void> {
    if (this.refuse) throw new ProviderError(`${this.name} is down`);
    this.sent.push(message);
  }
}

// A module of an extension: registers its providers when the application initializes.
function deliveryExtension(...providers: [NotificationProvider, ProviderPlacement?][]) {
  @Module({})
  class DeliveryExtensionModule implements OnModuleInit {
    constructor(@Inject(ProviderRegistry) private readonly registry: ProviderRegistry) {}

    onModuleInit(): void {
      for (const [provider, placement] of providers) this.registry.register(provider, placement);
    }
  }
  return DeliveryExtensionModule;
}

// Channels and templates of these apps (arrays replace the shipped ones). The shipped in-app
// welcome stays: a starting worker re-enqueues every queued row of the shared database.
function notifications(channels: { channelName: 'sms' | 'push' | 'inApp'; providers: string[]; fallbackProviders: string[] }[]): SettingsOverrides['notifications'] {
  return {
    defaultLanguage: 'en',
    providers: [],
    channels: [...channels, { channelName: 'inApp', providers: [], fallbackProviders: [] }],
    templates: [
      { templateName: 'code', channel: 'sms', language: 'en', body: 'Hi {{user.fullname}}, your code is {{code}}' },
      { templateName: 'ping', channel: 'push', language: 'en', body: { title: 'Ping {{n}}', body: 'Hello {{user.fullname}}' } },
      { templateName: 'welcome', channel: 'inApp', language: 'en', subject: 'Welcome, {{user.fullname}}', body: 'Your account in {{store.fullname}} is ready.' },
    ],
    eventRules: [],
    worker: { concurrency: 2, maxAttempts: 2, backoffMs: 50 },
  };
}

interface Row {
  status: string;
  deliveredBy: string | null;
  attempts: DeliveryAttempt[];
}

// The row once the worker is done with it (delivered or failed).
function settled(t: TestApp, id: string): Promise<Row> {
  return waitFor(`notification ${id} to settle`, async () => {
    const [row] = (await t.app.get(DataSource).query('SELECT status, "deliveredBy", attempts FROM notifications WHERE id = $1', [id])) as Row[];
    return row && row.status !== 'queued' ? row : undefined;
  });
}

describe('notification providers registered in code', () => {
  const texts = new RecordingProvider('texts');
  const backup = new RecordingProvider('backup');
  const pager = new RecordingProvider('pager');
  const mobile = '+14155552671';
  let t: TestApp;
  let storeId: string;
  let userId: string;

  const send = (request: Omit<SendRequest, 'storeId' | 'userId'>): Promise<string> => t.app.get(NotificationService).send({ storeId, userId, ...request });

  beforeAll(async () => {
    t = await startApp({
      env: { SERVICE_CODENAME: unique('nx') },
      settings: {
        secondaryIdentifierPresence: 'optional',
        // sms has no provider in the settings (the extension's fill it); push names the extension's by name.
        notifications: notifications([
          { channelName: 'sms', providers: [], fallbackProviders: [] },
          { channelName: 'push', providers: ['pager'], fallbackProviders: [] },
        ]),
      },
      imports: [deliveryExtension([texts, { channel: 'sms' }], [backup, { channel: 'sms', fallback: true }], [pager])],
    });
    const store = await registerStore(t.http);
    storeId = store.storeId;
    const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email: uniqueEmail(), mobile, password: PASSWORD, fullname: 'Ada Byron' }).expect(201);
    userId = res.body.user.id;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it("a provider placed on a channel receives the channel's notifications, rendered and addressed", async () => {
    const code = String(Date.now() % 1_000_000);
    const id = await send({ channel: 'sms', template: 'code', secretVars: { code } });
    expect(await settled(t, id)).toMatchObject({ status: 'delivered', deliveredBy: 'texts', attempts: [{ provider: 'texts', outcome: 'delivered' }] });
    expect(texts.sent.filter((m) => m.notificationId === id)).toEqual([{ notificationId: id, channel: 'sms', to: mobile, body: `Hi Ada Byron, your code is ${code}` }]);
    expect(backup.sent.filter((m) => m.notificationId === id)).toEqual([]);
  });

  it('a fallback placed on the channel delivers when the channel’s provider refuses', async () => {
    texts.refuse = true;
    try {
      const id = await send({ channel: 'sms', template: 'code', secretVars: { code: '424242' } });
      const row = await settled(t, id);
      expect(row).toMatchObject({ status: 'delivered', deliveredBy: 'backup' });
      expect(row.attempts.map((a) => [a.provider, a.outcome])).toEqual([
        ['texts', 'failed'],
        ['backup', 'delivered'],
      ]);
      expect(backup.sent.filter((m) => m.notificationId === id)).toEqual([expect.objectContaining({ to: mobile, body: 'Hi Ada Byron, your code is 424242' })]);
    } finally {
      texts.refuse = false;
    }
  });

  it('a provider registered without a place serves where the settings name it', async () => {
    const id = await send({ channel: 'push', template: 'ping', contextVars: { n: '7' } });
    expect(await settled(t, id)).toMatchObject({ status: 'delivered', deliveredBy: 'pager' });
    expect(pager.sent.filter((m) => m.notificationId === id)).toEqual([expect.objectContaining({ channel: 'push', to: userId, subject: 'Ping 7', body: 'Hello Ada Byron' })]);
  });
});

describe('notification providers registered in code, refused at boot', () => {
  // The boot's one ConfigError, as its problems.
  const refused = async (opts: Parameters<typeof startApp>[0]): Promise<string[]> => {
    const error = await startApp(opts).then(
      async (t) => {
        await t.close();
        throw new Error('the boot was not refused');
      },
      (e: unknown) => e as { name: string; problems: string[] },
    );
    expect(error.name).toBe('ConfigError');
    return error.problems;
  };

  it('a taken name, a channel the settings lack, a name that is no identifier, and a channel left without provider: named together', async () => {
    const problems = await refused({
      env: { SERVICE_CODENAME: unique('nx') },
      settings: { notifications: notifications([{ channelName: 'sms', providers: [], fallbackProviders: [] }]) },
      imports: [deliveryExtension([new RecordingProvider('one')], [new RecordingProvider('one')], [new RecordingProvider('two'), { channel: 'push' }], [new RecordingProvider('no name')])],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'notification provider "one" registered in code: the name is taken',
        'notification provider "two" registered in code: settings.notifications.channels has no push channel a provider delivers',
        'notification provider "no name" registered in code: the name must be an identifier (letters, digits, _ . -)',
        'settings.notifications.channels: sms has no provider',
      ]),
    );
  });
});
