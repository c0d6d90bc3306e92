import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { FakeApi, failure, type Answer, type Received } from '../../../../test/fake-api.js';
import type { OutgoingMessage } from './provider.js';
import { TwilioProvider } from './twilio.provider.js';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'tok-secret-9f8e7d';
const FROM = '+15005550006';
const WA_FROM = '+14155238886';
const TO = '+14155552671';

interface Recorded extends Received {
  form: URLSearchParams;
}

// Stands in for api.twilio.com: answers with a Message resource by default, as the real API
// does with 201 Created.
class FakeTwilio extends FakeApi<Recorded> {
  constructor() {
    super(
      (r) => ({ status: 201, body: messageResource(r.form) }),
      (r) => ({ ...r, form: new URLSearchParams(r.text) }),
    );
  }
}

function messageResource(form: URLSearchParams): Record<string, unknown> {
  const sid = 'SM' + '0'.repeat(32);
  return {
    account_sid: SID,
    api_version: '2010-04-01',
    body: form.get('Body'),
    date_created: 'Thu, 24 Aug 2023 05:01:45 +0000',
    date_sent: null,
    date_updated: 'Thu, 24 Aug 2023 05:01:45 +0000',
    direction: 'outbound-api',
    error_code: null,
    error_message: null,
    from: form.get('From'),
    messaging_service_sid: null,
    num_media: '0',
    num_segments: '1',
    price: null,
    price_unit: 'USD',
    sid,
    status: 'queued',
    subresource_uris: { media: `/2010-04-01/Accounts/${SID}/Messages/${sid}/Media.json` },
    to: form.get('To'),
    uri: `/2010-04-01/Accounts/${SID}/Messages/${sid}.json`,
  };
}

// Twilio's error body (legacy format, still what Messages answers).
function twilioError(status: number, code: number, message: string): Answer {
  return { status, body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status } };
}

function provider(settings: Record<string, unknown>, env: Record<string, string> = { TWILIO_AUTH_TOKEN: TOKEN }): TwilioProvider {
  return new TwilioProvider('twilio-main', settings, (name) => env[name]);
}

function message(over: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return { notificationId: '5f0c7a4e-8f57-4a38-9d6e-1c1f4f0c2d11', channel: 'sms', to: TO, body: 'Your code is 123456', ...over };
}

describe('TwilioProvider', () => {
  const api = new FakeTwilio();
  let twilio: TwilioProvider;

  beforeAll(async () => {
    await api.start();
    twilio = provider({ accountSid: SID, authToken: { env: 'TWILIO_AUTH_TOKEN' }, from: FROM, whatsappFrom: WA_FROM, apiBaseUrl: api.url });
  });
  afterAll(() => api.stop());
  beforeEach(() => {
    api.requests.length = 0;
    api.answer = (r) => ({ status: 201, body: messageResource(r.form) });
  });

  describe('what it sends', () => {
    it('an SMS: POST to the account Messages resource, HTTP Basic accountSid:authToken, form To/From/Body', async () => {
      await twilio.send(message({ body: 'Hello Ada, ünïcode & symbols = fine' }));
      expect(api.requests).toHaveLength(1);
      const [r] = api.requests;
      expect(r.method).toBe('POST');
      expect(r.url).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`);
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
      expect(r.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
      expect(Object.fromEntries(r.form)).toEqual({ To: TO, From: FROM, Body: 'Hello Ada, ünïcode & symbols = fine' });
    });

    it('a WhatsApp message: both From (whatsappFrom) and To carry the whatsapp: prefix', async () => {
      await twilio.send(message({ channel: 'whatsapp' }));
      expect(Object.fromEntries(api.requests[0].form)).toEqual({ To: `whatsapp:${TO}`, From: `whatsapp:${WA_FROM}`, Body: 'Your code is 123456' });
    });

    it('WhatsApp without whatsappFrom sends from `from`, prefixed; an already prefixed sender is kept as is', async () => {
      await provider({ accountSid: SID, authToken: 'plain', from: FROM, apiBaseUrl: api.url }).send(message({ channel: 'whatsapp' }));
      await provider({ accountSid: SID, authToken: 'plain', from: FROM, whatsappFrom: `whatsapp:${WA_FROM}`, apiBaseUrl: api.url }).send(message({ channel: 'whatsapp' }));
      expect(api.requests.map((r) => r.form.get('From'))).toEqual([`whatsapp:${FROM}`, `whatsapp:${WA_FROM}`]);
    });

    it('apiBaseUrl with a path prefix (a proxy) keeps the prefix before the API path', async () => {
      await provider({ accountSid: SID, authToken: 'plain', from: FROM, apiBaseUrl: `${api.url}/twilio/` }).send(message());
      expect(api.requests[0].url).toBe(`/twilio/2010-04-01/Accounts/${SID}/Messages.json`);
    });

    it('refuses a channel it does not deliver, permanently, without calling the API', async () => {
      const e = await failure(twilio.send(message({ channel: 'push' })));
      expect(e.permanent).toBe(true);
      expect(api.requests).toHaveLength(0);
    });
  });

  describe('error mapping', () => {
    it.each([
      [21211, "The 'To' number +1415555 is not a valid phone number."],
      [21614, "'To' number is not a valid mobile number"],
      [21610, 'Attempt to send to unsubscribed recipient'],
    ])('HTTP 400 with Twilio error %i (invalid recipient) → permanent, the code and text kept', async (code, text) => {
      api.answer = () => twilioError(400, code, text);
      const e = await failure(twilio.send(message()));
      expect(e.permanent).toBe(true);
      expect(e.message).toContain(String(code));
      expect(e.message).toContain(text);
    });

    it.each([401, 403])('HTTP %i (bad credentials) → permanent, and the auth token is not in the message', async (status) => {
      // A server that echoes the credential must not get it into the stored error text.
      api.answer = (r) => twilioError(status, 20003, `Authenticate: ${r.headers.authorization} token ${TOKEN}`);
      const e = await failure(twilio.send(message()));
      expect(e.permanent).toBe(true);
      expect(e.message).toContain(String(status));
      expect(e.message).not.toContain(TOKEN);
      expect(e.message).not.toContain(Buffer.from(`${SID}:${TOKEN}`).toString('base64'));
    });

    it.each([429, 500, 503])('HTTP %i → transient', async (status) => {
      api.answer = () => twilioError(status, status === 429 ? 20429 : 20500, 'Try again later');
      const e = await failure(twilio.send(message()));
      expect(e.permanent).toBe(false);
      expect(e.message).toContain(String(status));
    });

    it('HTTP 502 with an HTML body (a gateway page) → transient', async () => {
      api.answer = () => ({ status: 502, body: '<html>Bad Gateway</html>', contentType: 'text/html' });
      const e = await failure(twilio.send(message()));
      expect(e.permanent).toBe(false);
      expect(e.message).toContain('502');
    });

    it('a refused connection → transient', async () => {
      const closed = new FakeTwilio();
      await closed.start();
      const url = closed.url;
      await closed.stop();
      const e = await failure(provider({ accountSid: SID, authToken: { env: 'TWILIO_AUTH_TOKEN' }, from: FROM, apiBaseUrl: url }).send(message()));
      expect(e.permanent).toBe(false);
      expect(e.message).toContain('ECONNREFUSED');
      expect(e.message).not.toContain(TOKEN);
    });

    it('a message accepted but reported failed → permanent', async () => {
      api.answer = (r) => ({ status: 201, body: { ...messageResource(r.form), status: 'failed', error_code: 30007, error_message: 'Message filtered' } });
      const e = await failure(twilio.send(message()));
      expect(e.permanent).toBe(true);
      expect(e.message).toContain('30007');
    });
  });

  describe('settings', () => {
    it('names a missing required setting', () => {
      expect(() => provider({ accountSid: SID, authToken: 'x' })).toThrow(/from is required/);
      expect(() => provider({ authToken: 'x', from: FROM })).toThrow(/accountSid is required/);
    });

    it('names an unset environment variable', () => {
      expect(() => provider({ accountSid: SID, authToken: { env: 'NOPE' }, from: FROM }, {})).toThrow(/NOPE/);
    });

    it('refuses an account sid that is not one, and an apiBaseUrl that is not http(s)', () => {
      expect(() => provider({ accountSid: 'SK123', authToken: 'x', from: FROM })).toThrow(/AC/);
      expect(() => provider({ accountSid: SID, authToken: 'x', from: FROM, apiBaseUrl: 'ftp://example.com' })).toThrow(/apiBaseUrl/);
      expect(() => provider({ accountSid: SID, authToken: 'x', from: FROM, apiBaseUrl: 'not a url' })).toThrow(/apiBaseUrl/);
    });
  });
});
