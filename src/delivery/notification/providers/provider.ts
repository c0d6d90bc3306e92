import type { ChannelName } from '../notification.settings.js';

export interface OutgoingMessage {
  // Also the idempotency key, where the provider takes one.
  notificationId: string;
  channel: ChannelName;
  // Email address, E.164 number, or push target (the user id as external id).
  to: string;
  subject?: string;
  body: string;
  data?: Record<string, string>;
}

// A provider's refusal. Permanent ones (an invalid recipient) are not retried.
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

// Port: one delivery service (SMTP server, Twilio, OneSignal, or an extension's own, registered
// with ProviderRegistry.register).
export interface NotificationProvider {
  // Recorded on each delivery attempt and as `deliveredBy`: an identifier.
  readonly name: string;
  // The kind of service: `smtp`, `twilio`, `onesignal`, or an extension's word.
  readonly type: string;
  send(message: OutgoingMessage): Promise<void>;
  close?(): Promise<void>;
}

// Provider settings values `{ "env": "NAME" }` are read from the environment at boot.
export type EnvLookup = (name: string) => string | undefined;

export function setting(settings: Record<string, unknown>, key: string, env: EnvLookup, provider: string): string | undefined {
  const value = settings[key];
  if (value && typeof value === 'object' && 'env' in value) {
    const name = String((value as { env: unknown }).env);
    const resolved = env(name);
    if (resolved === undefined) throw new Error(`provider ${provider}: ${key} refers to environment variable ${name}, which is not set`);
    return resolved;
  }
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw new Error(`provider ${provider}: ${key} must be a string, number, boolean or { "env": NAME }`);
  }
  return String(value);
}

export function requiredSetting(settings: Record<string, unknown>, key: string, env: EnvLookup, provider: string): string {
  const value = setting(settings, key, env, provider);
  if (value === undefined || value === '') throw new Error(`provider ${provider}: providerSettings.${key} is required`);
  return value;
}

// An http(s) origin, optionally with a path prefix; no trailing slash.
export function baseUrl(value: string | undefined, provider: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`provider ${provider}: providerSettings.apiBaseUrl is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`provider ${provider}: providerSettings.apiBaseUrl must be http(s)`);
  if (url.search || url.hash) throw new Error(`provider ${provider}: providerSettings.apiBaseUrl must not have a query or fragment`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
