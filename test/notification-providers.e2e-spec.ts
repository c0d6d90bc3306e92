import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { FakeApi, type Received } from './fake-api.js';
import type { DeliveryAttempt } from '../src/delivery/notification/notification.entity.js';
import { NotificationService, type SendRequest } from '../src/delivery/notification/notification.service.js';
import { PASSWORD, registerStore, startApp, unique, uniqueEmail, type TestApp, waitFor } from './helpers.js';

// SMS and WhatsApp (Twilio) and push (OneSignal) end to end: the real worker and the real SDKs,
// pointed by providerSettings.apiBaseUrl at HTTP servers on 127.0.0.1 that stand in for the
// provider APIs, record what they receive and answer as the real ones do. Works on both queues
// (this app has its own SERVICE_CODENAME, hence its own BullMQ queue under REDIS_URL).

const HEADER = 'svc-store-codename';
const TOKEN = 'tok';
const ONESIGNAL_KEY = 'key';
const SID = 'AC0123456789abcdef0123456789abcdef';
const FROM = '+15005550006';
const WA_FROM = '+14155238886';
const APP_ID = '8a1b2c3d-0000-4000-8000-00000000a11d';
const MAX_ATTEMPTS = 3;

// ---------------------------------------------------------------- a provider API that records

const form = (r: Received): Record<string, string> => Object.fromEntries(new URLSearchParams(r.text));
const json = (r: Received): Record<string, unknown> => JSON.parse(r.text) as Record<string, unknown>;

// Twilio's 201 Message resource, OneSignal's CreateNotificationSuccessResponse.
const twilio = new FakeApi((r) => {
  const f = form(r);
  return { status: 201, body: { sid: `SM${'0'.repeat(32)}`, account_sid: SID, from: f.From, to: f.To, body: f.Body, status: 'queued', error_code: null, error_message: null, num_segments: '1', direction: 'outbound-api', api_version: '2010-04-01' } };
});
const onesignal = new FakeApi(() => ({ status: 200, body: { id: 'b98881cc-1e94-4366-bbd9-db8f3429292b', external_id: null } }));

// ---------------------------------------------------------------- polling and rows

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

// A per-test marker, so each test finds its own requests among all the server received.
const code = (): string => String(randomInt(100_000, 1_000_000));

// ---------------------------------------------------------------- the app

describe('SMS, WhatsApp and push through Twilio and OneSignal', () => {
  let t: TestApp;
  let storeId: string;
  let userId: string;
  const mobile = '+14155552671';

  const send = (request: Omit<SendRequest, 'storeId' | 'userId'>): Promise<string> => t.app.get(NotificationService).send({ storeId, userId, ...request });

  beforeAll(async () => {
    await Promise.all([twilio.start(), onesignal.start()]);
    t = await startApp({
      env: { TWILIO_AUTH_TOKEN: TOKEN, ONESIGNAL_KEY, SERVICE_CODENAME: unique('np') },
      settings: {
        secondaryIdentifierPresence: 'optional',
        // Arrays replace the shipped ones: every channel and template this app needs is given.
        notifications: {
          defaultLanguage: 'en',
          providers: [
            {
              providerName: 'twilio',
              providerType: 'twilio',
              providerSettings: { accountSid: SID, authToken: { env: 'TWILIO_AUTH_TOKEN' }, from: FROM, whatsappFrom: WA_FROM, apiBaseUrl: twilio.url },
            },
            { providerName: 'onesignal', providerType: 'onesignal', providerSettings: { appId: APP_ID, restApiKey: { env: 'ONESIGNAL_KEY' }, apiBaseUrl: onesignal.url } },
          ],
          channels: [
            { channelName: 'sms', providers: ['twilio'], fallbackProviders: [] },
            { channelName: 'whatsapp', providers: ['twilio'], fallbackProviders: [] },
            { channelName: 'push', providers: ['onesignal'], fallbackProviders: [] },
            { channelName: 'inApp', providers: [], fallbackProviders: [] },
          ],
          templates: [
            { templateName: 'code', channel: 'sms', language: 'en', body: 'Hi {{user.fullname}}, your code is {{code}}' },
            { templateName: 'code', channel: 'whatsapp', language: 'en', body: 'WhatsApp code {{code}} for {{user.fullname}}' },
            {
              templateName: 'shipped',
              channel: 'push',
              language: 'en',
              body: { title: 'Order {{orderId}} shipped', body: 'Hello {{user.fullname}}, order {{orderId}} is on its way', data: { orderId: '{{orderId}}', kind: 'shipping' } },
            },
            // The shipped in-app welcome: a starting worker re-enqueues every queued row of the
            // shared database, so another suite's welcome row may reach this app.
            { templateName: 'welcome', channel: 'inApp', language: 'en', subject: 'Welcome, {{user.fullname}}', body: 'Your account in {{store.fullname}} is ready.' },
          ],
          eventRules: [],
          worker: { concurrency: 2, maxAttempts: MAX_ATTEMPTS, backoffMs: 50 },
        },
      },
    });
    const store = await registerStore(t.http);
    storeId = store.storeId;
    const res = await t.http
      .post('/auth-api/v1/registerstoreuser')
      .set(HEADER, store.codename)
      // Written loosely on purpose: the stored (and sent) number is its E.164 form.
      .send({ email: uniqueEmail(), mobile: '+1 (415) 555-2671', password: PASSWORD, fullname: 'Ada & Byron' })
      .expect(201);
    userId = res.body.user.id;
    expect(res.body.user.mobile).toBe(mobile);
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([twilio.stop(), onesignal.stop()]);
  });

  describe('delivery', () => {
    it('sms: Twilio receives To = the user’s E.164 mobile and the rendered body; the row is delivered by twilio', async () => {
      const c = code();
      const id = await send({ channel: 'sms', template: 'code', secretVars: { code: c } });
      const row = await settled(t, id);
      expect(row).toMatchObject({ status: 'delivered', deliveredBy: 'twilio', attempts: [{ provider: 'twilio', outcome: 'delivered' }] });
      const requests = twilio.requests.filter((r) => form(r).Body?.includes(c));
      expect(requests).toHaveLength(1);
      expect(requests[0].url).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`);
      expect(requests[0].headers.authorization).toBe(`Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
      // Plain text: `&` is not turned into an entity.
      expect(form(requests[0])).toEqual({ To: mobile, From: FROM, Body: `Hi Ada & Byron, your code is ${c}` });
    });

    it('whatsapp: From and To carry the whatsapp: prefix', async () => {
      const c = code();
      const id = await send({ channel: 'whatsapp', template: 'code', secretVars: { code: c } });
      expect(await settled(t, id)).toMatchObject({ status: 'delivered', deliveredBy: 'twilio' });
      const requests = twilio.requests.filter((r) => form(r).Body?.includes(c));
      expect(requests.map(form)).toEqual([{ To: `whatsapp:${mobile}`, From: `whatsapp:${WA_FROM}`, Body: `WhatsApp code ${c} for Ada & Byron` }]);
    });

    it('push: OneSignal receives the user id as external id, the rendered title, body and data, and the notification id as idempotency key', async () => {
      const orderId = code();
      const id = await send({ channel: 'push', template: 'shipped', contextVars: { orderId } });
      expect(await settled(t, id)).toMatchObject({ status: 'delivered', deliveredBy: 'onesignal', attempts: [{ provider: 'onesignal', outcome: 'delivered' }] });
      const requests = onesignal.requests.filter((r) => json(r).idempotency_key === id);
      expect(requests).toHaveLength(1);
      expect(requests[0].url).toBe('/notifications');
      expect(requests[0].headers.authorization).toBe(`Key ${ONESIGNAL_KEY}`);
      expect(json(requests[0])).toEqual({
        app_id: APP_ID,
        include_aliases: { external_id: [userId] },
        target_channel: 'push',
        headings: { en: `Order ${orderId} shipped` },
        contents: { en: `Hello Ada & Byron, order ${orderId} is on its way` },
        data: { orderId, kind: 'shipping' },
        idempotency_key: id,
      });
    });
  });

  describe('failures', () => {
    it('sms refused as an invalid recipient (HTTP 400, 21211): failed after one attempt, not retried', async () => {
      const c = code();
      twilio.rules.push({
        match: (r) => !!form(r).Body?.includes(c),
        answer: () => ({ status: 400, body: { code: 21211, message: `The 'To' number ${mobile} is not a valid phone number.`, more_info: 'https://www.twilio.com/docs/errors/21211', status: 400 } }),
      });
      const id = await send({ channel: 'sms', template: 'code', secretVars: { code: c } });
      const row = await settled(t, id);
      expect(row.status).toBe('failed');
      expect(row.deliveredBy).toBeNull();
      expect(row.attempts).toHaveLength(1);
      expect(row.attempts[0]).toMatchObject({ provider: 'twilio', outcome: 'failed', permanent: true });
      expect(row.attempts[0].error).toContain('21211');
      expect(twilio.requests.filter((r) => form(r).Body?.includes(c))).toHaveLength(1);
    });

    it('push to an external id OneSignal does not know (200 with invalid_aliases): failed after one attempt', async () => {
      const orderId = code();
      onesignal.rules.push({
        match: (r) => (json(r).data as Record<string, string> | undefined)?.orderId === orderId,
        answer: () => ({ status: 200, body: { id: '', errors: { invalid_aliases: { external_id: [userId] } } } }),
      });
      const id = await send({ channel: 'push', template: 'shipped', contextVars: { orderId } });
      const row = await settled(t, id);
      expect(row.status).toBe('failed');
      expect(row.attempts).toHaveLength(1);
      expect(row.attempts[0]).toMatchObject({ provider: 'onesignal', outcome: 'failed', permanent: true });
      expect(row.attempts[0].error).toContain('invalid_aliases');
      expect(onesignal.requests.filter((r) => json(r).idempotency_key === id)).toHaveLength(1);
    });

    it(`sms answered HTTP 503 every time: failed after ${MAX_ATTEMPTS} attempts, each recorded without the credential`, async () => {
      const c = code();
      // The answer echoes the credential it was sent: the stored text must still not hold it.
      twilio.rules.push({
        match: (r) => !!form(r).Body?.includes(c),
        answer: (r) => ({ status: 503, body: { code: 20503, message: `Service Unavailable (seen ${r.headers.authorization}, token ${TOKEN})`, status: 503 } }),
      });
      const id = await send({ channel: 'sms', template: 'code', secretVars: { code: c } });
      const row = await settled(t, id);
      expect(row.status).toBe('failed');
      expect(row.attempts).toHaveLength(MAX_ATTEMPTS);
      for (const attempt of row.attempts) {
        expect(attempt).toMatchObject({ provider: 'twilio', outcome: 'failed', permanent: false });
        expect(attempt.error).toContain('503');
        expect(attempt.error).toContain('Service Unavailable');
        expect(attempt.error).not.toContain(TOKEN);
        expect(attempt.error).not.toContain(Buffer.from(`${SID}:${TOKEN}`).toString('base64'));
      }
      expect(twilio.requests.filter((r) => form(r).Body?.includes(c))).toHaveLength(MAX_ATTEMPTS);
    });

    it(`push answered HTTP 503 every time: failed after ${MAX_ATTEMPTS} attempts, each with the same idempotency key and no credential`, async () => {
      const orderId = code();
      onesignal.rules.push({
        match: (r) => (json(r).data as Record<string, string> | undefined)?.orderId === orderId,
        answer: (r) => ({ status: 503, body: { errors: [`Service temporarily unavailable (seen ${r.headers.authorization})`] } }),
      });
      const id = await send({ channel: 'push', template: 'shipped', contextVars: { orderId } });
      const row = await settled(t, id);
      expect(row.status).toBe('failed');
      expect(row.attempts).toHaveLength(MAX_ATTEMPTS);
      for (const attempt of row.attempts) {
        expect(attempt).toMatchObject({ provider: 'onesignal', outcome: 'failed', permanent: false });
        expect(attempt.error).toContain('503');
        expect(attempt.error).not.toContain(`Key ${ONESIGNAL_KEY}`);
      }
      const requests = onesignal.requests.filter((r) => (json(r).data as Record<string, string> | undefined)?.orderId === orderId);
      expect(requests.map((r) => json(r).idempotency_key)).toEqual(Array(MAX_ATTEMPTS).fill(id));
    });
  });
});
