import {
  createConfiguration,
  DefaultApi,
  ResponseContext,
  SelfDecodingBody,
  ServerConfiguration,
  wrapHttpLibrary,
  type HttpLibrary,
  type Notification,
} from '@onesignal/node-onesignal';
import { baseUrl, ProviderError, requiredSetting, setting, type EnvLookup, type NotificationProvider, type OutgoingMessage } from './provider.js';

// A hung API must not hold a worker slot for ever: the attempt fails (transient) and is retried.
const REQUEST_TIMEOUT_MS = 15_000;

// OneSignal push to a user's devices, the user id being the OneSignal external id.
// providerSettings: appId, restApiKey, apiBaseUrl (optional).
export class OneSignalProvider implements NotificationProvider {
  readonly type = 'onesignal' as const;
  private readonly api: DefaultApi;
  private readonly appId: string;
  // Never part of an error message (stored in the notification's attempts).
  private readonly restApiKey: string;

  constructor(
    readonly name: string,
    settings: Record<string, unknown>,
    env: EnvLookup,
  ) {
    this.appId = requiredSetting(settings, 'appId', env, name);
    this.restApiKey = requiredSetting(settings, 'restApiKey', env, name);
    const apiBaseUrl = baseUrl(setting(settings, 'apiBaseUrl', env, name), name);
    this.api = new DefaultApi(
      createConfiguration({
        restApiKey: this.restApiKey,
        // The SDK appends the endpoint path (/notifications) to this URL.
        baseServer: apiBaseUrl ? new ServerConfiguration(apiBaseUrl, {}) : undefined,
        httpApi: fetchWithTimeout(REQUEST_TIMEOUT_MS),
      }),
    );
  }

  async send(message: OutgoingMessage): Promise<void> {
    if (message.channel !== 'push') throw new ProviderError(`onesignal does not deliver the ${message.channel} channel`, true);
    const notification: Notification = {
      app_id: this.appId,
      include_aliases: { external_id: [message.to] },
      target_channel: 'push',
      // OneSignal requires the `en` key; the text is already in the recipient's language.
      contents: { en: message.body },
      ...(message.subject && { headings: { en: message.subject } }),
      ...(message.data && { data: message.data }),
      // A retried job (say, after a timeout the API did act on) is not delivered twice.
      idempotency_key: message.notificationId,
    };
    let result: { id?: string; errors?: unknown };
    try {
      result = await this.api.createNotification(notification);
    } catch (error) {
      throw this.toProviderError(error);
    }
    // 200 without an id, or with errors (invalid_aliases, "All included players are not
    // subscribed"): the one recipient cannot be reached, and will not be on a retry.
    if (!result.id || hasErrors(result.errors)) {
      throw new ProviderError(this.scrub(`onesignal: not delivered: ${describeErrors(result.errors) || 'no notification id returned'}`), true);
    }
  }

  // HTTP 4xx (invalid alias or player, bad app id, 401/403 bad key) fails the same way again,
  // so it is permanent; 408, 429, 5xx and network trouble are not.
  private toProviderError(error: unknown): ProviderError {
    const e = error as { code?: unknown; body?: unknown; message?: unknown; name?: unknown; cause?: { code?: unknown } };
    // The SDK's ApiException: `code` is the HTTP status, `body` the parsed answer.
    if (typeof e?.code === 'number' && 'body' in e) {
      const status = e.code;
      const permanent = status >= 400 && status < 500 && status !== 408 && status !== 429;
      return new ProviderError(this.scrub(`onesignal: HTTP ${status}: ${describeErrors(errorsOf(e.body)) || 'no error text'}`), permanent);
    }
    // fetch: TypeError "fetch failed" with the socket error as cause, or a TimeoutError.
    const code = typeof e?.cause?.code === 'string' ? ` (${e.cause.code})` : '';
    return new ProviderError(this.scrub(`onesignal: request failed${code}: ${String(e?.message ?? error)}`), false);
  }

  private scrub(text: string): string {
    return text.split(this.restApiKey).join('[redacted]');
  }
}

// The SDK's default fetch library has no timeout; the same request with one.
function fetchWithTimeout(timeoutMs: number): HttpLibrary {
  return wrapHttpLibrary({
    async send(request) {
      const response = await fetch(request.getUrl(), {
        method: request.getHttpMethod(),
        body: request.getBody() as string | undefined,
        headers: request.getHeaders(),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => (headers[name] = value));
      // Read within the timeout too: a stalled body must not hang the job.
      const body = Buffer.from(await response.arrayBuffer());
      return new ResponseContext(response.status, headers, new SelfDecodingBody(Promise.resolve(body)));
    },
  });
}

function errorsOf(body: unknown): unknown {
  return body && typeof body === 'object' && 'errors' in body ? (body as { errors: unknown }).errors : body;
}

function hasErrors(errors: unknown): boolean {
  if (Array.isArray(errors)) return errors.length > 0;
  if (errors && typeof errors === 'object') return Object.keys(errors).length > 0;
  return typeof errors === 'string' && errors !== '';
}

// OneSignal reports errors as a list of strings, a list of { title, code }, or an object
// such as { invalid_aliases: { external_id: [...] } }.
function describeErrors(errors: unknown): string {
  if (errors === undefined || errors === null || errors === '') return '';
  if (typeof errors === 'string') return errors.slice(0, 400);
  if (Array.isArray(errors)) {
    return errors
      .map((e) => (typeof e === 'string' ? e : ((e as { title?: string; code?: string })?.title ?? JSON.stringify(e))))
      .join('; ')
      .slice(0, 400);
  }
  return hasErrors(errors) ? JSON.stringify(errors).slice(0, 400) : '';
}
