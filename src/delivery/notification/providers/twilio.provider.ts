import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';
import type * as TwilioResponse from 'twilio/lib/http/response.js';
import { baseUrl, ProviderError, requiredSetting, setting, type EnvLookup, type NotificationProvider, type OutgoingMessage } from './provider.js';

// A hung API must not hold a worker slot for ever: the attempt fails (transient) and is retried.
const REQUEST_TIMEOUT_MS = 15_000;

// Twilio Programmable Messaging for the sms and whatsapp channels. providerSettings:
// accountSid, authToken, from (E.164), whatsappFrom (optional, else `from`), apiBaseUrl (optional).
export class TwilioProvider implements NotificationProvider {
  readonly type = 'twilio' as const;
  private readonly client: twilio.Twilio;
  private readonly from: string;
  private readonly whatsappFrom: string;
  // Texts that must never reach an error message (stored in the notification's attempts).
  private readonly secrets: string[];

  constructor(
    readonly name: string,
    settings: Record<string, unknown>,
    env: EnvLookup,
  ) {
    const accountSid = requiredSetting(settings, 'accountSid', env, name);
    const authToken = requiredSetting(settings, 'authToken', env, name);
    this.from = requiredSetting(settings, 'from', env, name);
    this.whatsappFrom = setting(settings, 'whatsappFrom', env, name) ?? this.from;
    this.secrets = [authToken, Buffer.from(`${accountSid}:${authToken}`).toString('base64')];
    const apiBaseUrl = baseUrl(setting(settings, 'apiBaseUrl', env, name), name);
    const options: twilio.ClientOpts = apiBaseUrl
      ? { httpClient: new RedirectingRequestClient(apiBaseUrl, { timeout: REQUEST_TIMEOUT_MS }) }
      : { timeout: REQUEST_TIMEOUT_MS };
    // The SDK checks the sid's form (AC…) here, so a wrong one stops the boot.
    this.client = twilio(accountSid, authToken, { ...options, autoRetry: false });
  }

  async send(message: OutgoingMessage): Promise<void> {
    if (message.channel !== 'sms' && message.channel !== 'whatsapp') {
      throw new ProviderError(`twilio does not deliver the ${message.channel} channel`, true);
    }
    const whatsapp = message.channel === 'whatsapp';
    const from = whatsapp ? withWhatsappPrefix(this.whatsappFrom) : this.from;
    const to = whatsapp ? withWhatsappPrefix(message.to) : message.to;
    let result: { status?: string; errorCode?: number | null; errorMessage?: string | null };
    try {
      // Twilio has no idempotency key for messages: a retry after a lost answer may send twice.
      result = await this.client.messages.create({ from, to, body: message.body });
    } catch (error) {
      throw this.toProviderError(error);
    }
    if (result.status === 'failed' || result.status === 'undelivered') {
      throw new ProviderError(this.scrub(`twilio: message ${result.status}: error ${result.errorCode ?? '?'} ${result.errorMessage ?? ''}`.trim()), true);
    }
  }

  // HTTP 4xx (invalid or unsubscribed recipient: 21211, 21614, 21610…; bad credentials: 401/403)
  // fails the same way again, so it is permanent; 408, 429, 5xx and network trouble are not.
  private toProviderError(error: unknown): ProviderError {
    const e = error as { status?: unknown; code?: unknown; message?: unknown; title?: unknown; detail?: unknown };
    if (typeof e?.status === 'number') {
      const code = typeof e.code === 'number' && e.code ? ` error ${e.code}` : '';
      const text = [e.message, e.detail].filter((t) => typeof t === 'string' && t).join(': ') || 'no error text';
      const permanent = e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429;
      return new ProviderError(this.scrub(`twilio: HTTP ${e.status}${code}: ${text}`), permanent);
    }
    // axios network errors carry a code such as ECONNREFUSED or ECONNABORTED (timeout).
    const code = typeof e?.code === 'string' ? ` (${e.code})` : '';
    return new ProviderError(this.scrub(`twilio: request failed${code}: ${String(e?.message ?? error)}`), false);
  }

  private scrub(text: string): string {
    return this.secrets.reduce((t, secret) => (secret ? t.split(secret).join('[redacted]') : t), text);
  }
}

// Sends every request to `base` instead of Twilio's host, keeping path and query: a proxy or a
// test server. Set after the SDK applies edge/region, so those cannot undo it.
class RedirectingRequestClient extends twilio.RequestClient {
  constructor(
    private readonly base: string,
    opts: RequestClient.RequestClientOptions,
  ) {
    super(opts);
  }

  override request<TData>(opts: RequestClient.RequestOptions<TData>): Promise<TwilioResponse.default<TData>> {
    const original = new URL(opts.uri);
    return super.request({ ...opts, uri: `${this.base}${original.pathname}${original.search}` });
  }
}

function withWhatsappPrefix(address: string): string {
  return address.startsWith('whatsapp:') ? address : `whatsapp:${address}`;
}
