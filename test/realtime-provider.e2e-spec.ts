import { randomBytes } from 'node:crypto';
import { createServer as createNetServer, connect, type Server as NetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { AppError } from '../src/kernel/errors.js';
// The service's configuration: the platform's AppConfig over the service's own sections.
import { ServiceConfig as AppConfig } from '../src/settings.js';
import { BootChecks } from '../src/platform/config/boot-checks.js';
import type { RealtimeChannelSettings } from '../src/channels/realtime/realtime.settings.js';
import { RealtimeChannelService } from '../src/channels/realtime/realtime.service.js';
import { APP, decrypt, fakePusherApi, verifySigned, webhook, type PusherRequest } from './fake-pusher.js';
import type { FakeApi } from './fake-api.js';
import { captureNestLog, type NestLogLine } from './nest-log.js';

// The provider client against a local stand-in for the provider's REST API that checks every
// request's signature: operations, limits, encryption, webhooks, failures.

const MASTER_KEY = randomBytes(32).toString('base64');

async function service(api: FakeApi<PusherRequest>, over: Partial<RealtimeChannelSettings> = {}, env: Record<string, string> = { PUSHER_SECRET: APP.secret }): Promise<RealtimeChannelService> {
  const port = Number(new URL(api.url).port);
  const realtimeChannel = { appId: APP.appId, key: APP.key, secret: { env: 'PUSHER_SECRET' }, cluster: 'eu', host: '127.0.0.1', port, useTLS: false, forwardRules: [], ...over };
  const checks = new BootChecks();
  const rt = await RealtimeChannelService.create(AppConfig.load({ env: { LOG_LEVEL: 'silent', ...env }, settings: { realtimeChannel: realtimeChannel as RealtimeChannelSettings } }), checks);
  checks.assert(); // the boot-time check
  return rt;
}

// The AppError a call fails with (thrown at once or as a rejection).
async function refusal(call: () => unknown): Promise<AppError> {
  let error: unknown;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

const name = (n: number) => 'c'.repeat(n);

// A provider failure is logged as a warning with its status or its cause, never the signed URL:
// kept here for the tests to read, and a warning no test took fails the test it came from.
let log: ReturnType<typeof captureNestLog>;
beforeEach(() => {
  log = captureNestLog();
});
afterEach(() => {
  const untaken = log.take();
  log.restore();
  expect(untaken).toEqual([]);
});

const warning = (fields: Record<string, unknown>, message: string): NestLogLine => ({ level: 'warn', message: fields, params: [message, 'RealtimeChannel'] });

describe('realtime channel service against the provider REST API', () => {
  let api: FakeApi<PusherRequest>;
  let rt: RealtimeChannelService;

  beforeAll(async () => {
    api = fakePusherApi();
    await api.start();
    rt = await service(api, { encryptionMasterKeyBase64: MASTER_KEY });
  });
  afterAll(() => api.stop());
  beforeEach(() => {
    api.requests.length = 0;
    api.rules.length = 0;
  });

  it('triggers an event with a request the provider accepts as signed, and returns its answer', async () => {
    api.rules.push({ match: (r) => r.path.endsWith('/events'), answer: () => ({ status: 200, body: { channels: { 'presence-a_room': { subscription_count: 2, user_count: 1 } } } }) });
    const reply = await rt.triggerEvent({ channel: 'presence-a_room', event: 'order-shipped', data: { id: 7 }, socketId: '123.456', info: 'subscription_count,user_count' });
    expect(reply).toEqual({ channels: { 'presence-a_room': { subscription_count: 2, user_count: 1 } } });
    const [req] = api.requests;
    expect(req).toMatchObject({ method: 'POST', path: `/apps/${APP.appId}/events`, signed: true });
    expect(req.body).toEqual({ name: 'order-shipped', channels: ['presence-a_room'], data: '{"id":7}', socket_id: '123.456', info: 'subscription_count,user_count' });
  });

  it('is refused by the provider when signed with another secret: a 502 with the provider status', async () => {
    const wrong = await service(api, {}, { PUSHER_SECRET: 'not-the-secret' });
    const error = await refusal(() => wrong.triggerEvent({ channel: 'a_b', event: 'e', data: {} }));
    expect(api.requests[0].signed).toBe(false);
    expect(error).toMatchObject({ errCode: 'RealtimeProviderError', status: 502, fields: { providerStatus: 401 } });
    expect(log.take()).toEqual([warning({ status: 401, body: 'Invalid signature' }, 'realtime provider refused a request')]);
  });

  it('sends every REST operation of the spec to its provider path, signed', async () => {
    await rt.triggerMultipleChannels({ channels: ['a_one', 'a_two'], event: 'e', data: { n: 1 } });
    await rt.triggerBatch([
      { channel: 'a_one', event: 'e1', data: { n: 1 } },
      { channel: 'presence-a_p', event: 'e2', data: { n: 2 }, socketId: '1.2', info: 'user_count' },
    ]);
    await rt.sendToUser('user-1', 'hello', { n: 3 });
    await rt.listChannels({ filterByPrefix: 'presence-', info: 'user_count' });
    await rt.getChannel('a_one', 'subscription_count');
    await rt.getChannelUsers('presence-a_p');
    await rt.terminateUserConnections('user-1');
    await rt.customGet('/channels', { filter_by_prefix: 'a_' });
    await rt.customPost('/events', { x: 'y' }, { name: 'raw', channels: ['a_one'], data: '{}' });
    expect(api.requests.every((r) => r.signed)).toBe(true);
    const base = `/apps/${APP.appId}`;
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST ${base}/events`,
      `POST ${base}/batch_events`,
      `POST ${base}/events`,
      `GET ${base}/channels`,
      `GET ${base}/channels/a_one`,
      `GET ${base}/channels/presence-a_p/users`,
      `POST ${base}/users/user-1/terminate_connections`,
      `GET ${base}/channels`,
      `POST ${base}/events`,
    ]);
    expect(api.requests[0].body).toMatchObject({ channels: ['a_one', 'a_two'], data: '{"n":1}' });
    expect(api.requests[1].body).toEqual({
      batch: [
        { channel: 'a_one', name: 'e1', data: '{"n":1}' },
        { channel: 'presence-a_p', name: 'e2', data: '{"n":2}', socket_id: '1.2', info: 'user_count' },
      ],
    });
    expect(api.requests[2].body).toMatchObject({ channels: ['#server-to-user-user-1'], name: 'hello' });
    expect(api.requests[3].query).toMatchObject({ filter_by_prefix: 'presence-', info: 'user_count' });
    expect(api.requests[4].query).toMatchObject({ info: 'subscription_count' });
    expect(api.requests[7].query).toMatchObject({ filter_by_prefix: 'a_' });
    expect(api.requests[8].query).toMatchObject({ x: 'y' });
  });

  it('creates signed query strings the provider accepts', () => {
    const path = `/apps/${APP.appId}/channels`;
    const query = rt.createSignedQueryString({ method: 'GET', path, params: { info: 'user_count' } });
    expect(verifySigned('GET', `${path}?${query}`, '')).toBe(true);
    const body = '{"a":1}';
    const post = rt.createSignedQueryString({ method: 'POST', path, body });
    expect(verifySigned('POST', `${path}?${post}`, body)).toBe(true);
    expect(verifySigned('POST', `${path}?${post}`, '{"a":2}')).toBe(false);
  });

  it('authorizes channels and users with signatures of the app secret', () => {
    const { auth } = rt.authorizeChannel('1.2', 'private-a_x');
    expect(auth).toMatch(/^app-key:[0-9a-f]{64}$/);
    const presence = rt.authorizeChannel('1.2', 'presence-a_x', { user_id: 'u1', user_info: { name: 'Ada' } });
    expect(JSON.parse(presence.channel_data!)).toEqual({ user_id: 'u1', user_info: { name: 'Ada' } });
    const user = rt.authenticateUser('1.2', { id: 'u1', name: 'Ada' });
    expect(JSON.parse(user.user_data)).toEqual({ id: 'u1', name: 'Ada' });
  });

  describe('encrypted channels', () => {
    it('put only ciphertext on the wire, which the channel key decrypts', async () => {
      const secret = { card: 'secret-payload-4111' };
      await rt.triggerEvent({ channel: 'private-encrypted-a_vault', event: 'e', data: secret });
      await rt.triggerBatch([{ channel: 'private-encrypted-a_vault', event: 'e', data: secret }]);
      for (const req of api.requests) expect(req.text).not.toContain('secret-payload');
      const wire = [(api.requests[0].body as { data: string }).data, (api.requests[1].body as { batch: { data: string }[] }).batch[0].data];
      for (const data of wire) expect(decrypt('private-encrypted-a_vault', MASTER_KEY, data)).toEqual(secret);
      expect(() => decrypt('private-encrypted-a_other', MASTER_KEY, wire[0])).toThrow('does not decrypt');
    });

    it('hand the channel key to an authorized client', () => {
      const { shared_secret } = rt.authorizeChannel('1.2', 'private-encrypted-a_vault');
      expect(shared_secret).toBeDefined();
    });

    it('are refused without a master key, and never share a trigger', async () => {
      const plain = await service(api);
      expect((await refusal(() => plain.triggerEvent({ channel: 'private-encrypted-a_v', event: 'e', data: {} }))).errCode).toBe('RealtimeEncryptionDisabled');
      expect((await refusal(() => plain.authorizeChannel('1.2', 'private-encrypted-a_v'))).errCode).toBe('RealtimeEncryptionDisabled');
      expect((await refusal(() => rt.triggerMultipleChannels({ channels: ['private-encrypted-a_v', 'a_w'], event: 'e', data: {} }))).errCode).toBe('RealtimeInvalidChannel');
      expect(api.requests).toHaveLength(0);
    });
  });

  describe('limits, checked before any request', () => {
    const limits: [string, () => unknown, string][] = [
      ['channel of 201 characters', () => rt.triggerEvent({ channel: name(201), event: 'e', data: {} }), 'RealtimeInvalidChannel'],
      ['channel with a character outside the set', () => rt.triggerEvent({ channel: 'a.b', event: 'e', data: {} }), 'RealtimeInvalidChannel'],
      ['empty channel', () => rt.triggerEvent({ channel: '', event: 'e', data: {} }), 'RealtimeInvalidChannel'],
      ['event of 201 characters', () => rt.triggerEvent({ channel: 'a_b', event: name(201), data: {} }), 'RealtimeInvalidEvent'],
      ['missing event', () => rt.triggerEvent({ channel: 'a_b', event: undefined, data: {} }), 'RealtimeInvalidEvent'],
      ['data that is not an object', () => rt.triggerEvent({ channel: 'a_b', event: 'e', data: 'text' }), 'RealtimeInvalidParameter'],
      ['101 channels', () => rt.triggerMultipleChannels({ channels: Array.from({ length: 101 }, (_, i) => `c${i}`), event: 'e', data: {} }), 'RealtimeTooManyChannels'],
      ['a bad channel among many', () => rt.triggerMultipleChannels({ channels: ['ok', 'no way'], event: 'e', data: {} }), 'RealtimeInvalidChannel'],
      ['11 events in a batch', () => rt.triggerBatch(Array.from({ length: 11 }, () => ({ channel: 'a_b', event: 'e', data: {} }))), 'RealtimeTooManyEvents'],
      ['a bad event in a batch', () => rt.triggerBatch([{ channel: 'a_b', event: name(201), data: {} }]), 'RealtimeInvalidEvent'],
      ['channel users of a non-presence channel', () => rt.getChannelUsers('private-a_b'), 'RealtimeNotPresenceChannel'],
      ['unknown info', () => rt.triggerEvent({ channel: 'a_b', event: 'e', data: {}, info: 'member_count' }), 'RealtimeInvalidInfo'],
      ['info repeated', () => rt.getChannel('a_b', 'subscription_count,subscription_count'), 'RealtimeInvalidInfo'],
      ['user_count outside presence channels', () => rt.triggerEvent({ channel: 'a_b', event: 'e', data: {}, info: 'user_count' }), 'RealtimeInvalidInfo'],
      ['a socket id that is not one', () => rt.triggerEvent({ channel: 'a_b', event: 'e', data: {}, socketId: 'abc' }), 'RealtimeInvalidSocketId'],
      ['sendToUser without a user', () => rt.sendToUser('', 'e', {}), 'RealtimeInvalidParameter'],
      ['sendToUser with a long event', () => rt.sendToUser('u1', name(201), {}), 'RealtimeInvalidEvent'],
      ['user data without id', () => rt.authenticateUser('1.2', { name: 'x' }), 'RealtimeInvalidParameter'],
      ['user auth without socket id', () => rt.authenticateUser(undefined, { id: 'u' }), 'RealtimeInvalidSocketId'],
      ['authorizing a public channel', () => rt.authorizeChannel('1.2', 'a_b'), 'RealtimeInvalidChannel'],
      ['presence channel without channel data', () => rt.authorizeChannel('1.2', 'presence-a_b'), 'RealtimeInvalidParameter'],
      ['channel data without user id', () => rt.authorizeChannel('1.2', 'presence-a_b', { user_info: {} }), 'RealtimeInvalidParameter'],
      ['terminating without a user', () => rt.terminateUserConnections(undefined), 'RealtimeInvalidParameter'],
      ['a custom path outside the API', () => rt.customGet('/../../etc'), 'RealtimeInvalidParameter'],
      ['a custom path with a query', () => rt.customGet('/channels?x=1'), 'RealtimeInvalidParameter'],
      ['a param the signature owns', () => rt.customGet('/channels', { auth_signature: 'x' }), 'RealtimeInvalidParameter'],
      ['a signed query string without method', () => rt.createSignedQueryString({ method: undefined, path: '/x' }), 'RealtimeInvalidParameter'],
      ['webhook without headers', () => rt.validateWebhook(undefined, '{}'), 'RealtimeInvalidParameter'],
      ['webhook tokens that are not key/secret pairs', () => rt.validateWebhook({}, '{}', [{ key: 'k' }]), 'RealtimeInvalidParameter'],
    ];
    it.each(limits)('refuses %s', async (_what, call, errCode) => {
      const error = await refusal(call);
      expect({ errCode: error.errCode, status: error.status }).toEqual({ errCode, status: 400 });
      expect(api.requests).toHaveLength(0);
    });

    it('accepts exactly 200-character names, 100 channels and 10 events', async () => {
      await rt.triggerEvent({ channel: name(200), event: name(200), data: {} });
      await rt.triggerMultipleChannels({ channels: Array.from({ length: 100 }, (_, i) => `c${i}`), event: 'e', data: {} });
      await rt.triggerBatch(Array.from({ length: 10 }, () => ({ channel: 'a_b', event: 'e', data: {} })));
      expect(api.requests.map((r) => r.signed)).toEqual([true, true, true]);
      expect((api.requests[1].body as { channels: string[] }).channels).toHaveLength(100);
    });
  });

  describe('webhooks', () => {
    const body = { time_ms: 1700000000000, events: [{ name: 'channel_occupied', channel: 'private-a_room' }, { name: 'member_added', channel: 'presence-a_p', user_id: 'u1' }] };

    it('are valid with the app signature and read into events', () => {
      const { headers, text } = webhook(body);
      expect(rt.validateWebhook(headers, text)).toEqual({
        valid: true,
        timeMs: 1700000000000,
        events: [{ name: 'channel_occupied', channel: 'private-a_room' }, { name: 'member_added', channel: 'presence-a_p', userId: 'u1' }],
      });
    });

    it('are invalid with another secret, another key, a changed body or no signature', () => {
      const forged = webhook(body, { key: APP.key, secret: 'guess' });
      expect(rt.validateWebhook(forged.headers, forged.text)).toEqual({ valid: false });
      const otherKey = webhook(body, { key: 'other', secret: APP.secret });
      expect(rt.validateWebhook(otherKey.headers, otherKey.text)).toEqual({ valid: false });
      const good = webhook(body);
      expect(rt.validateWebhook(good.headers, good.text.replace('u1', 'u2'))).toEqual({ valid: false });
      const { 'x-pusher-signature': _dropped, ...unsigned } = good.headers;
      expect(rt.validateWebhook(unsigned, good.text)).toEqual({ valid: false });
    });

    it('accept the additional tokens of a secret rotation, with header keys in any case', () => {
      const next = { key: 'next-key', secret: 'next-secret' };
      const { headers, text } = webhook(body, next);
      expect(rt.validateWebhook(headers, text).valid).toBe(false);
      const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
      expect(rt.validateWebhook(upper, text, [next]).valid).toBe(true);
    });
  });

  describe('provider failures', () => {
    it('a provider error is a 502 with its status', async () => {
      api.rules.push({ match: () => true, answer: () => ({ status: 503, body: { error: 'busy' } }) });
      const error = await refusal(() => rt.getChannel('a_b'));
      expect(error).toMatchObject({ errCode: 'RealtimeProviderError', status: 502, fields: { providerStatus: 503 } });
      expect(log.take()).toEqual([warning({ status: 503, body: '{"error":"busy"}' }, 'realtime provider refused a request')]);
    });

    it('an unreachable provider is a 502 without a status', async () => {
      const closed = createNetServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const error = await refusal(async () => (await service(api, { port })).getChannel('a_b'));
      expect(error).toMatchObject({ errCode: 'RealtimeProviderError', status: 502, fields: {} });
      expect(log.take()).toEqual([warning({ reason: 'ECONNREFUSED' }, 'realtime provider not reachable')]);
    });

    it('a provider slower than the timeout is a 502', async () => {
      // A server that accepts and never answers stands in for a slow provider.
      const silent = createNetServer((socket) => socket.on('data', () => undefined));
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const error = await refusal(async () => (await service(api, { timeout: 100, port: (silent.address() as AddressInfo).port })).getChannel('a_b'));
      expect(error).toMatchObject({ errCode: 'RealtimeProviderError', status: 502, fields: {} });
      expect(log.take()).toEqual([warning({ reason: 'aborted' }, 'realtime provider not reachable')]);
      silent.close();
    });
  });

  it('goes through the configured proxy', async () => {
    const tunnels: string[] = [];
    const proxy: NetServer = createNetServer((client) => {
      client.once('data', (head) => {
        const target = /^CONNECT (\S+) HTTP/.exec(head.toString())?.[1];
        if (!target) return client.destroy();
        tunnels.push(target);
        const [host, port] = target.split(':');
        const upstream = connect(Number(port), host, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(client).pipe(upstream);
        });
        upstream.on('error', () => client.destroy());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const via = await service(api, { proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, keepAlive: true });
    await via.getChannel('a_b');
    expect(tunnels).toEqual([`127.0.0.1:${new URL(api.url).port}`]);
    expect(api.requests[0].signed).toBe(true);
    proxy.close();
  });

  describe('configuration', () => {
    it('is off without realtimeChannel: every operation answers RealtimeChannelDisabled', async () => {
      const off = await RealtimeChannelService.create(AppConfig.load({ env: { LOG_LEVEL: 'silent' } }), new BootChecks());
      expect(off.enabled).toBe(false);
      for (const call of [() => off.triggerEvent({ channel: '', event: '', data: null }), () => off.authorizeChannel('x', 'y'), () => off.validateWebhook({}, ''), () => off.listChannels()]) {
        expect(await refusal(call)).toMatchObject({ errCode: 'RealtimeChannelDisabled', status: 404 });
      }
    });

    it('refuses to boot without its secret in the environment, or with a bad master key', async () => {
      await expect(service(api, {}, {})).rejects.toThrow(/realtimeChannel.secret: environment variable PUSHER_SECRET is not set/);
      await expect(service(api, { encryptionMasterKeyBase64: Buffer.alloc(16).toString('base64') })).rejects.toThrow(/32-byte key/);
      await expect(service(api, { secret: 'inline-secret' } as never)).rejects.toThrow(/realtimeChannel.secret/);
    });
  });
});
