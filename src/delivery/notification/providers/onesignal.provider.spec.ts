import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { OneSignalProvider } from './onesignal.provider.js';
import { FakeApi, failure, type Answer, type Received } from '../../../../test/fake-api.js';
import type { OutgoingMessage } from './provider.js';

const APP_ID = '8a1b2c3d-0000-4000-8000-00000000a11d';
const KEY = 'os_v2_app_secretkey123';
const USER_ID = '3d2b9a5e-1f4c-4b6e-9a7d-2c8e1f0a4b5c';
const NOTIFICATION_ID = '5f0c7a4e-8f57-4a38-9d6e-1c1f4f0c2d11';

interface Recorded extends Received {
  json: Record<string, unknown>;
}

// Stands in for api.onesignal.com: answers with a CreateNotificationSuccessResponse by default.
class FakeOneSignal extends FakeApi<Recorded> {
  constructor() {
    super(success, (r) => ({ ...r, json: r.text ? (JSON.parse(r.text) as Record<string, unknown>) : {} }));
  }
}

function success(): Answer {
  return { status: 200, body: { id: 'b98881cc-1e94-4366-bbd9-db8f3429292b', external_id: null } };
}

function provider(settings: Record<string, unknown>, env: Record<string, string> = { ONESIGNAL_KEY: KEY }): OneSignalProvider {
  return new OneSignalProvider('onesignal-main', settings, (name) => env[name]);
}

function message(over: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return { notificationId: NOTIFICATION_ID, channel: 'push', to: USER_ID, subject: 'Order shipped', body: 'Your order 42 is on its way', data: { orderId: '42' }, ...over };
}

describe('OneSignalProvider', () => {
  const api = new FakeOneSignal();
  let onesignal: OneSignalProvider;

  beforeAll(async () => {
    await api.start();
    onesignal = provider({ appId: APP_ID, restApiKey: { env: 'ONESIGNAL_KEY' }, apiBaseUrl: api.url });
  });
  afterAll(() => api.stop());
  beforeEach(() => {
    api.requests.length = 0;
    api.answer = success;
  });

  describe('what it sends', () => {
    it('POST /notifications with `Authorization: Key <restApiKey>` and a JSON notification to the external id', async () => {
      await onesignal.send(message());
      expect(api.requests).toHaveLength(1);
      const [r] = api.requests;
      expect(r.method).toBe('POST');
      expect(r.url).toBe('/notifications');
      expect(r.headers.authorization).toBe(`Key ${KEY}`);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.json).toEqual({
        app_id: APP_ID,
        include_aliases: { external_id: [USER_ID] },
        target_channel: 'push',
        headings: { en: 'Order shipped' },
        contents: { en: 'Your order 42 is on its way' },
        data: { orderId: '42' },
        idempotency_key: NOTIFICATION_ID,
      });
    });

    it('leaves out headings and data when the message has none', async () => {
      await onesignal.send(message({ subject: undefined, data: undefined }));
      expect(api.requests[0].json).not.toHaveProperty('headings');
      expect(api.requests[0].json).not.toHaveProperty('data');
      expect(api.requests[0].json.contents).toEqual({ en: 'Your order 42 is on its way' });
    });

    it('apiBaseUrl with a path prefix (a proxy) keeps the prefix', async () => {
      await provider({ appId: APP_ID, restApiKey: 'plain', apiBaseUrl: `${api.url}/onesignal/` }).send(message());
      expect(api.requests[0].url).toBe('/onesignal/notifications');
    });

    it('refuses a channel it does not deliver, permanently, without calling the API', async () => {
      const e = await failure(onesignal.send(message({ channel: 'sms' })));
      expect(e.permanent).toBe(true);
      expect(api.requests).toHaveLength(0);
    });
  });

  describe('error mapping', () => {
    it.each([
      ['invalid_aliases', { id: '', errors: { invalid_aliases: { external_id: [USER_ID] } } }, /invalid_aliases/],
      ['All included players are not subscribed', { id: '', errors: ['All included players are not subscribed'] }, /not subscribed/],
    ])('200 reporting %s → permanent', async (_, body, text) => {
      api.answer = () => ({ status: 200, body });
      const e = await failure(onesignal.send(message()));
      expect(e.permanent).toBe(true);
      expect(e.message).toMatch(text);
    });

    it.each([
      ['invalid player ids', { errors: { invalid_player_ids: ['5fdc92b2-3b2a-11e5-ac13-8fdccfe4d986'] } }, /invalid_player_ids/],
      ['an unsubscribed alias', { errors: ['All included players are not subscribed'] }, /not subscribed/],
      ['a malformed notification', { errors: ['Notification content must not be null for any languages.'] }, /content must not be null/],
    ])('HTTP 400 with %s → permanent', async (_, body, text) => {
      api.answer = () => ({ status: 400, body });
      const e = await failure(onesignal.send(message()));
      expect(e.permanent).toBe(true);
      expect(e.message).toContain('400');
      expect(e.message).toMatch(text);
    });

    it.each([401, 403])('HTTP %i (bad key) → permanent, and the key is not in the message', async (status) => {
      // A server that echoes the credential must not get it into the stored error text.
      api.answer = (r) => ({ status, body: { errors: [`Access denied. Please include an 'Authorization: ...' header (got ${r.headers.authorization})`] } });
      const e = await failure(onesignal.send(message()));
      expect(e.permanent).toBe(true);
      expect(e.message).toContain(String(status));
      expect(e.message).toContain('Access denied');
      expect(e.message).not.toContain(KEY);
    });

    it('HTTP 429 → transient', async () => {
      api.answer = () => ({ status: 429, body: { errors: ['API rate limit exceeded'], limit: 'send_limit' } });
      const e = await failure(onesignal.send(message()));
      expect(e.permanent).toBe(false);
      expect(e.message).toContain('429');
    });

    it.each([500, 503])('HTTP %i → transient', async (status) => {
      api.answer = () => ({ status, body: { errors: ['Service temporarily unavailable'] } });
      const e = await failure(onesignal.send(message()));
      expect(e.permanent).toBe(false);
      expect(e.message).toContain(String(status));
    });

    it('HTTP 502 with an HTML body (a gateway page) → transient', async () => {
      api.answer = () => ({ status: 502, body: '<html>Bad Gateway</html>', contentType: 'text/html' });
      const e = await failure(onesignal.send(message()));
      expect(e.permanent).toBe(false);
      expect(e.message).toContain('502');
    });

    it('a refused connection → transient', async () => {
      const closed = new FakeOneSignal();
      await closed.start();
      const url = closed.url;
      await closed.stop();
      const e = await failure(provider({ appId: APP_ID, restApiKey: { env: 'ONESIGNAL_KEY' }, apiBaseUrl: url }).send(message()));
      expect(e.permanent).toBe(false);
      expect(e.message).toContain('ECONNREFUSED');
      expect(e.message).not.toContain(KEY);
    });
  });

  describe('settings', () => {
    it('names a missing required setting or unset environment variable', () => {
      expect(() => provider({ restApiKey: 'x' })).toThrow(/appId is required/);
      expect(() => provider({ appId: APP_ID })).toThrow(/restApiKey is required/);
      expect(() => provider({ appId: APP_ID, restApiKey: { env: 'NOPE' } }, {})).toThrow(/NOPE/);
    });

    it('refuses an apiBaseUrl that is not http(s)', () => {
      expect(() => provider({ appId: APP_ID, restApiKey: 'x', apiBaseUrl: 'file:///tmp' })).toThrow(/apiBaseUrl/);
    });
  });
});
