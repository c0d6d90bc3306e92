import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Logger } from '@nestjs/common';
import type createHttpsProxyAgent from 'https-proxy-agent';
import type Pusher from 'pusher';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import type { RealtimeChannelSettings } from './realtime.settings.js';
import * as check from './realtime.limits.js';
import { RealtimeSection } from './realtime.settings.js';

export interface TriggerInput {
  channel: unknown;
  event: unknown;
  data: unknown;
  socketId?: unknown;
  info?: unknown;
}

export interface WebhookEvent {
  name: string;
  channel?: string;
  event?: string;
  data?: string;
  socketId?: string;
  userId?: string;
}

// The provider library and the proxy agent, loaded only when `realtimeChannel` is set
// (~13 MB otherwise idle).
interface ProviderLibrary {
  Pusher: typeof Pusher;
  createHttpsProxyAgent: typeof createHttpsProxyAgent;
}

async function loadLibrary(): Promise<ProviderLibrary> {
  const [pusher, proxyAgent] = await Promise.all([import('pusher'), import('https-proxy-agent')]);
  return { Pusher: pusher.default, createHttpsProxyAgent: proxyAgent.default };
}

export type WebhookCheck = { valid: false } | { valid: true; timeMs: number; events: WebhookEvent[] };

// A provider reply: the JSON body it sent (an empty object when it sent none).
export type ProviderReply = Record<string, unknown>;

// The Pusher-compatible provider, over the `pusher` library (SPEC "Outbound realtime channel
// integration"). Every operation checks its parameters against the SPEC's limits first, so a
// bad call is a 400 with its own errCode and never a library exception or a provider round trip;
// a provider failure is a 502 with the provider's status. Provided by RealtimeModule's factory
// (`create`), which loads the library when the channel is configured.
export class RealtimeChannelService {
  private readonly logger = new Logger('RealtimeChannel');
  private readonly pusher: Pusher | undefined;
  private readonly encryption: boolean;

  static async create(config: AppConfig, checks: BootChecks): Promise<RealtimeChannelService> {
    return new RealtimeChannelService(config, checks, config.section(RealtimeSection).realtimeChannel ? await loadLibrary() : undefined);
  }

  // `library` is loaded by `create` whenever `realtimeChannel` is set.
  private constructor(
    config: AppConfig,
    checks: BootChecks,
    private readonly library?: ProviderLibrary,
  ) {
    const settings = config.section(RealtimeSection).realtimeChannel;
    this.encryption = settings?.encryptionMasterKeyBase64 !== undefined;
    // Reported, not thrown: the boot stops after init (BootChecks), so createApp closes the
    // database pool and Redis connections already opened.
    const problems = settings ? settingsProblems(settings, config.secretFromEnv) : [];
    checks.report(problems);
    this.pusher = settings && !problems.length ? createClient(library!, settings, config.secretFromEnv(settings.secret.env)!) : undefined;
  }

  get enabled(): boolean {
    return this.pusher !== undefined;
  }

  triggerEvent(input: TriggerInput): Promise<ProviderReply> {
    this.client();
    const channel = check.channelName(input.channel);
    return this.trigger([channel], input);
  }

  triggerMultipleChannels(input: Omit<TriggerInput, 'channel'> & { channels: unknown }): Promise<ProviderReply> {
    this.client();
    return this.trigger(check.channelList(input.channels), input);
  }

  triggerBatch(events: unknown): Promise<ProviderReply> {
    this.client();
    const batch = check.batchSize(events).map((item, i): Pusher.BatchEvent => {
      const at = `events[${i}]`;
      if (!item || typeof item !== 'object') throw new AppError('RealtimeInvalidParameter', `${at} must be an object`);
      const e = item as Record<string, unknown>;
      const channel = check.channelName(e.channel, `${at}.channel`);
      this.encryptable([channel]);
      const socketId = check.socketId(e.socketId, false, `${at}.socketId`);
      const info = check.info(e.info, [channel], `${at}.info`);
      return { channel, name: check.eventName(e.event, `${at}.event`), data: check.eventData(e.data, `${at}.data`), ...(socketId && { socket_id: socketId }), ...(info && { info }) };
    });
    return this.call((p) => p.triggerBatch(batch));
  }

  sendToUser(userId: unknown, event: unknown, data: unknown): Promise<ProviderReply> {
    this.client();
    const id = check.userId(userId);
    const name = check.eventName(event);
    const payload = check.eventData(data);
    return this.call((p) => p.sendToUser(id, name, payload));
  }

  listChannels(input: { filterByPrefix?: unknown; info?: unknown } = {}): Promise<ProviderReply> {
    this.client();
    const prefix = input.filterByPrefix === undefined ? undefined : check.channelName(input.filterByPrefix, 'filterByPrefix');
    const info = check.info(input.info, prefix?.startsWith(check.PRESENCE_PREFIX) ? 'presence' : [''], 'info');
    return this.call((p) => p.get({ path: '/channels', params: { ...(prefix && { filter_by_prefix: prefix }), ...(info && { info }) } }));
  }

  getChannel(channelName: unknown, infoValue?: unknown): Promise<ProviderReply> {
    this.client();
    const name = check.channelName(channelName, 'channelName');
    const info = check.info(infoValue, [name]);
    return this.call((p) => p.get({ path: `/channels/${name}`, params: info ? { info } : {} }));
  }

  getChannelUsers(channelName: unknown): Promise<ProviderReply> {
    this.client();
    const name = check.presenceChannel(channelName);
    return this.call((p) => p.get({ path: `/channels/${name}/users` }));
  }

  // userData: `id` required and unique; `name`, `email`, `avatarUrl` optional.
  authenticateUser(socketId: unknown, userData: unknown): Pusher.UserAuthResponse {
    this.client();
    const socket = check.socketId(socketId, true)!;
    const data = check.eventData(userData, 'userData');
    check.userId(data.id, 'userData.id');
    for (const field of ['name', 'email', 'avatarUrl']) {
      if (data[field] !== undefined && (typeof data[field] !== 'string' || (data[field] as string).length > 500)) {
        throw new AppError('RealtimeInvalidParameter', `userData.${field} must be a string of at most 500 characters`);
      }
    }
    return this.client().authenticateUser(socket, data as Pusher.UserChannelData);
  }

  // A `private-`, `private-encrypted-` or `presence-` channel; presence channels carry the
  // member as channelData `{ user_id, user_info? }`.
  authorizeChannel(socketId: unknown, channel: unknown, channelData?: unknown): Pusher.ChannelAuthResponse {
    this.client();
    const socket = check.socketId(socketId, true)!;
    const name = check.channelName(channel);
    const presence = name.startsWith(check.PRESENCE_PREFIX);
    if (!presence && !name.startsWith(check.PRIVATE_PREFIX)) throw new AppError('RealtimeInvalidChannel', 'only private- and presence- channels are authorized');
    this.encryptable([name]);
    let member: Pusher.PresenceChannelData | undefined;
    if (channelData !== undefined || presence) {
      if (!presence) throw new AppError('RealtimeInvalidParameter', 'channelData belongs to presence- channels');
      const data = check.eventData(channelData, 'channelData');
      check.userId(data.user_id, 'channelData.user_id');
      if (data.user_info !== undefined) check.eventData(data.user_info, 'channelData.user_info');
      member = data as unknown as Pusher.PresenceChannelData;
    }
    return this.client().authorizeChannel(socket, name, member);
  }

  terminateUserConnections(userId: unknown): Promise<ProviderReply> {
    this.client();
    const id = check.userId(userId);
    return this.call((p) => p.terminateUserConnections(id));
  }

  // Headers as received (keys lower-cased here), the exact body bytes, and any extra key/secret
  // pairs accepted while a secret is being rotated.
  validateWebhook(headers: unknown, rawBody: unknown, additionalTokens?: unknown): WebhookCheck {
    this.client();
    if (!headers || typeof headers !== 'object') throw new AppError('RealtimeInvalidParameter', 'headers must be an object');
    if (typeof rawBody !== 'string') throw new AppError('RealtimeInvalidParameter', 'rawBody must be the request body as text');
    const tokens = additionalTokens === undefined ? [] : additionalTokens;
    if (!Array.isArray(tokens) || tokens.some((t) => !t || typeof (t as Pusher.Token).key !== 'string' || typeof (t as Pusher.Token).secret !== 'string')) {
      throw new AppError('RealtimeInvalidParameter', 'additionalTokens must be an array of { key, secret }');
    }
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v[0] : v]));
    // The library compares the content type exactly; a charset parameter does not change JSON.
    if (typeof lower['content-type'] === 'string') lower['content-type'] = lower['content-type'].split(';')[0].trim().toLowerCase();
    if (typeof lower['x-pusher-signature'] !== 'string' || typeof lower['x-pusher-key'] !== 'string') return { valid: false };
    const webhook = this.client().webhook({ headers: lower, rawBody });
    if (!webhook.isValid(tokens as Pusher.Token[])) return { valid: false };
    const data = webhook.getData() as unknown as { time_ms?: unknown; events?: unknown };
    if (!Array.isArray(data.events)) return { valid: false };
    const events = data.events
      .filter((e): e is Record<string, unknown> => !!e && typeof e === 'object' && typeof (e as Record<string, unknown>).name === 'string')
      .map((e) => ({
        name: e.name as string,
        ...(typeof e.channel === 'string' && { channel: e.channel }),
        ...(typeof e.event === 'string' && { event: e.event }),
        ...(typeof e.data === 'string' && { data: e.data }),
        ...(typeof e.socket_id === 'string' && { socketId: e.socket_id }),
        ...(typeof e.user_id === 'string' && { userId: e.user_id }),
      }));
    return { valid: true, timeMs: typeof data.time_ms === 'number' ? data.time_ms : Date.now(), events };
  }

  createSignedQueryString(input: { method: unknown; path: unknown; body?: unknown; params?: unknown }): string {
    this.client();
    if (typeof input.method !== 'string' || !/^(GET|POST|PUT|DELETE|PATCH|HEAD)$/i.test(input.method)) throw new AppError('RealtimeInvalidParameter', 'method must be an HTTP method');
    const path = check.apiPath(input.path);
    if (input.body !== undefined && typeof input.body !== 'string') throw new AppError('RealtimeInvalidParameter', 'body must be the request body as text');
    const params = check.queryParams(input.params);
    return this.client().createSignedQueryString({ method: input.method, path, ...(input.body !== undefined && { body: input.body as string }), ...(params && { params }) });
  }

  customGet(path: unknown, params?: unknown): Promise<ProviderReply> {
    this.client();
    const p = check.apiPath(path);
    const q = check.queryParams(params);
    return this.call((c) => c.get({ path: p, ...(q && { params: q }) }));
  }

  customPost(path: unknown, params?: unknown, body?: unknown): Promise<ProviderReply> {
    this.client();
    const p = check.apiPath(path);
    const q = check.queryParams(params);
    const b = body === undefined ? {} : check.eventData(body, 'body');
    // The library JSON-encodes the body it is given.
    return this.call((c) => c.post({ path: p, ...(q && { params: q }), body: b as unknown as string }));
  }

  private trigger(channels: string[], input: Omit<TriggerInput, 'channel'>): Promise<ProviderReply> {
    this.encryptable(channels);
    const event = check.eventName(input.event);
    const data = check.eventData(input.data);
    const socketId = check.socketId(input.socketId, false);
    const info = check.info(input.info, channels);
    return this.call((p) => p.trigger(channels, event, data, { ...(socketId && { socket_id: socketId }), ...(info && { info }) }));
  }

  private encryptable(channels: string[]): void {
    if (!this.encryption && channels.some(check.isEncrypted)) {
      throw new AppError('RealtimeEncryptionDisabled', 'private-encrypted- channels need encryptionMasterKeyBase64 in realtimeChannel');
    }
  }

  // First call of every operation: while off, the answer is 404 whatever the input.
  assertEnabled(): void {
    if (!this.pusher) throw new AppError('RealtimeChannelDisabled', 'this service has no realtime channel configured');
  }

  private client(): Pusher {
    this.assertEnabled();
    return this.pusher!;
  }

  private async call(request: (pusher: Pusher) => Promise<{ text(): Promise<string> }>): Promise<ProviderReply> {
    const pusher = this.client();
    let text: string;
    try {
      text = await (await request(pusher)).text();
    } catch (error) {
      throw this.providerError(error);
    }
    if (!text.trim()) return {};
    try {
      const body: unknown = JSON.parse(text);
      return body && typeof body === 'object' && !Array.isArray(body) ? (body as ProviderReply) : { result: body };
    } catch {
      throw new AppError('RealtimeProviderError', 'the realtime provider answered with a body that is not JSON');
    }
  }

  // The request URL carries the signature: only the status and the provider's words are kept.
  private providerError(error: unknown): AppError {
    if (this.library && error instanceof this.library.Pusher.RequestError && typeof error.status === 'number') {
      this.logger.warn({ status: error.status, body: error.body?.slice(0, 500) }, 'realtime provider refused a request');
      return new AppError('RealtimeProviderError', `the realtime provider answered ${error.status}`, {}, undefined, { providerStatus: error.status });
    }
    // The library's messages quote the signed URL: only the failure's code is logged.
    const cause = (error as { error?: { code?: string; type?: string; name?: string } })?.error;
    this.logger.warn({ reason: cause?.code ?? cause?.type ?? cause?.name ?? 'unknown' }, 'realtime provider not reachable');
    return new AppError('RealtimeProviderError', 'the realtime provider could not be reached');
  }
}

// Settings checked once at boot: a missing secret or a bad key stops the service with its name.
function settingsProblems(settings: RealtimeChannelSettings, secretFromEnv: (name: string) => string | undefined): string[] {
  const problems: string[] = [];
  if (!secretFromEnv(settings.secret.env)) problems.push(`settings.realtimeChannel.secret: environment variable ${settings.secret.env} is not set`);
  const key = settings.encryptionMasterKeyBase64;
  if (key !== undefined && (!/^[A-Za-z0-9+/]+={0,2}$/.test(key) || Buffer.from(key, 'base64').length !== 32)) {
    problems.push('settings.realtimeChannel.encryptionMasterKeyBase64: must be the base64 of a 32-byte key');
  }
  return problems;
}

function createClient({ Pusher, createHttpsProxyAgent }: ProviderLibrary, settings: RealtimeChannelSettings, secret: string): Pusher {
  const key = settings.encryptionMasterKeyBase64;
  const useTLS = settings.useTLS ?? true;
  const agent = agentFor(createHttpsProxyAgent, settings, useTLS);
  const base = {
    appId: settings.appId,
    key: settings.key,
    secret,
    useTLS,
    ...(settings.timeout !== undefined && { timeout: settings.timeout }),
    ...(agent && { agent }),
    ...(key !== undefined && { encryptionMasterKeyBase64: key }),
  };
  return new Pusher({ ...base, host: settings.host ?? `api-${settings.cluster}.pusher.com`, ...(settings.port !== undefined && { port: String(settings.port) }) });
}

// Through the proxy when one is set (CONNECT tunnel); otherwise a keep-alive agent when asked.
function agentFor(createProxyAgent: typeof createHttpsProxyAgent, settings: RealtimeChannelSettings, useTLS: boolean): HttpAgent | undefined {
  const keepAlive = settings.keepAlive ?? false;
  if (settings.proxy) {
    const url = new URL(settings.proxy);
    const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
    const options = { host: url.hostname, port: url.port || (url.protocol === 'https:' ? 443 : 80), protocol: url.protocol, keepAlive, ...(auth && { auth }) };
    return createProxyAgent(options as createHttpsProxyAgent.HttpsProxyAgentOptions) as unknown as HttpAgent;
  }
  if (!keepAlive) return undefined;
  return useTLS ? new HttpsAgent({ keepAlive }) : new HttpAgent({ keepAlive });
}
