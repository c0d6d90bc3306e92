import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import PusherJs from 'pusher-js';
import { Broker, type BrokerMessage } from '../src/delivery/broker/broker.js';
import { listen } from './event-clients.js';
import type { FakeApi } from './fake-api.js';
import { APP, fakePusherApi, FakePusherSocketServer, webhook, type PusherRequest } from './fake-pusher.js';
import { expectError, itIf, login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type RegisteredStore, type TestApp } from './helpers.js';

// The realtime channel in the running service: channel authorization for the logged-in user
// (store-scoped), user authentication, the provider's webhooks onto the broker, forward rules,
// and pusher-js subscribing through /realtime/auth against a Pusher-protocol server.

// A CommonJS package: the module is the client class, though its types describe a default export.
const Pusher = PusherJs as unknown as typeof PusherJs.default;
type Pusher = InstanceType<typeof Pusher>;

const HEADER = 'svc-store-codename';
const AUTH = '/auth-api/realtime/auth';
const USER_AUTH = '/auth-api/realtime/user-auth';
const WEBHOOK = '/auth-api/realtime/webhook';
const bearer = (token: string) => `Bearer ${token}`;
const signature = (text: string) => `${APP.key}:${createHmac('sha256', APP.secret).update(text).digest('hex')}`;

// The service with the realtime channel on `api`, forwarding user.created and store.created.
function realtimeApp(api: FakeApi<PusherRequest>): Parameters<typeof startApp>[0] {
  return {
    env: { REALTIME_SECRET: APP.secret },
    settings: {
      realtimeChannel: {
        appId: APP.appId,
        key: APP.key,
        secret: { env: 'REALTIME_SECRET' },
        cluster: 'eu',
        host: '127.0.0.1',
        port: Number(new URL(api.url).port),
        useTLS: false,
        forwardRules: [
          { topic: 'user.created', channel: 'private-{storeCodename}_admin-users', event: 'user-created' },
          { topic: 'dbEvent:store:created', channel: 'presence-{storeCodename}_admin-lobby', event: 'store-created' },
        ],
      },
    } as never,
  };
}

async function userOf(t: TestApp, store: RegisteredStore): Promise<{ id: string; token: string }> {
  const email = uniqueEmail();
  const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Store User' }).expect(201);
  return { id: res.body.user.id, token: (await login(t.http, email, PASSWORD, store.codename)).accessToken };
}

describe('realtime channel', () => {
  let t: TestApp;
  let api: FakeApi<PusherRequest>;
  let store: RegisteredStore;
  let owner: { id: string; token: string };

  beforeAll(async () => {
    api = fakePusherApi();
    await api.start();
    t = await startApp(realtimeApp(api));
    store = await registerStore(t.http);
    owner = { id: store.ownerId, token: (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken };
  });
  afterAll(async () => {
    await t?.close();
    await api?.stop();
  });
  beforeEach(() => {
    api.requests.length = 0;
  });

  const authorize = (token: string, channel: string, codename = store.codename) =>
    t.http.post(AUTH).set(HEADER, codename).set('Authorization', bearer(token)).send({ socket_id: '123.456', channel_name: channel });

  describe('POST /auth-api/realtime/auth', () => {
    it('signs a private channel of the caller\'s store for its socket', async () => {
      const channel = `private-${store.codename}_orders`;
      const res = await authorize(owner.token, channel).expect(200);
      expect(res.body).toEqual({ auth: signature(`123.456:${channel}`) });
    });

    it('takes the form-encoded body pusher-js sends', async () => {
      const channel = `private-${store.codename}_orders`;
      const res = await t.http
        .post(AUTH)
        .set(HEADER, store.codename)
        .set('Authorization', bearer(owner.token))
        .type('form')
        .send(`socket_id=123.456&channel_name=${channel}`)
        .expect(200);
      expect(res.body.auth).toBe(signature(`123.456:${channel}`));
    });

    it('gives presence members their id and name from the session, nothing more', async () => {
      const channel = `presence-${store.codename}_lobby`;
      const res = await authorize(owner.token, channel).expect(200);
      expect(JSON.parse(res.body.channel_data)).toEqual({ user_id: owner.id, user_info: { name: 'Store Owner' } });
      expect(res.body.auth).toBe(signature(`123.456:${channel}:${res.body.channel_data}`));
      expect(res.body.channel_data).not.toContain('@');
    });

    it('never signs another store\'s channel, whatever the name tries', async () => {
      const other = await registerStore(t.http);
      const otherOwner = await login(t.http, other.ownerEmail, PASSWORD, other.codename);
      for (const channel of [`private-${other.codename}_orders`, `presence-${other.codename}_lobby`, `private-${other.codename}`, `private-${store.codename}-x_orders`, 'private-orders']) {
        expectError(await authorize(owner.token, channel), 403, 'RealtimeChannelForbidden');
      }
      // Naming the other store with this store's token is a tenant mismatch before anything else.
      expectError(await authorize(owner.token, `private-${other.codename}_orders`, other.codename), 403, 'TenantMismatch');
      await authorize(otherOwner.accessToken, `private-${other.codename}_orders`, other.codename).expect(200);
    });

    it('keeps a user\'s channel to that user and admin channels to admins', async () => {
      const user = await userOf(t, store);
      await authorize(user.token, `private-${store.codename}_user-${user.id}`).expect(200);
      await authorize(user.token, `private-${store.codename}_user-${user.id}-inbox`).expect(200);
      expectError(await authorize(user.token, `private-${store.codename}_user-${owner.id}`), 403, 'RealtimeChannelForbidden');
      expectError(await authorize(user.token, `private-${store.codename}_admin`), 403, 'RealtimeChannelForbidden');
      expectError(await authorize(user.token, `private-${store.codename}_admin-audit`), 403, 'RealtimeChannelForbidden');
      await authorize(owner.token, `private-${store.codename}_admin-audit`).expect(200);
      await authorize(user.token, `private-${store.codename}_orders`).expect(200);
    });

    it('answers bad input with a 400 and its errCode', async () => {
      expectError(await authorize(owner.token, `${store.codename}_public`), 400, 'RealtimeInvalidChannel');
      expectError(await authorize(owner.token, `private-${store.codename}_${'x'.repeat(200)}`), 400, 'RealtimeInvalidChannel');
      expectError(await authorize(owner.token, `private-${store.codename}_a.b`), 400, 'RealtimeInvalidChannel');
      expectError(await authorize(owner.token, `private-encrypted-${store.codename}_vault`), 400, 'RealtimeEncryptionDisabled');
      const badSocket = await t.http.post(AUTH).set(HEADER, store.codename).set('Authorization', bearer(owner.token)).send({ socket_id: 'x', channel_name: `private-${store.codename}_a` });
      expectError(badSocket, 400, 'RealtimeInvalidSocketId');
      const missing = await t.http.post(AUTH).set(HEADER, store.codename).set('Authorization', bearer(owner.token)).send({ socket_id: '1.2' });
      expectError(missing, 400, 'ValidationFailed');
      const extra = await t.http.post(AUTH).set(HEADER, store.codename).set('Authorization', bearer(owner.token)).send({ socket_id: '1.2', channel_name: 'private-x_y', roles: ['admin'] });
      expectError(extra, 400, 'UnknownField');
    });

    it('needs a login', async () => {
      const res = await t.http.post(AUTH).set(HEADER, store.codename).send({ socket_id: '1.2', channel_name: `private-${store.codename}_orders` });
      expect(res.status).toBe(401);
    });

    it('takes form bodies only on the realtime client routes', async () => {
      const res = await t.http.post('/auth-api/login').type('form').send(`username=${store.ownerEmail}&password=${PASSWORD}`);
      expectError(res, 415, 'UnsupportedMediaType');
    });
  });

  describe('POST /auth-api/realtime/user-auth', () => {
    it('signs the connection as the logged-in user', async () => {
      const res = await t.http.post(USER_AUTH).set(HEADER, store.codename).set('Authorization', bearer(owner.token)).send({ socket_id: '123.456' }).expect(200);
      expect(JSON.parse(res.body.user_data)).toEqual({ id: owner.id, name: 'Store Owner' });
      expect(res.body.auth).toBe(signature(`123.456::user::${res.body.user_data}`));
    });

    it('refuses a bad socket id and anonymous callers', async () => {
      expectError(await t.http.post(USER_AUTH).set(HEADER, store.codename).set('Authorization', bearer(owner.token)).send({ socket_id: '1' }), 400, 'RealtimeInvalidSocketId');
      expect((await t.http.post(USER_AUTH).send({ socket_id: '1.2' })).status).toBe(401);
    });
  });

  describe('POST /auth-api/realtime/webhook', () => {
    it('publishes a signed webhook\'s events on the broker, with the store of each channel', async () => {
      const got: BrokerMessage[] = [];
      const stop = await t.app.get(Broker).subscribe('auth-realtime-webhook', (m) => void got.push(m));
      try {
        const { headers, text } = webhook({
          time_ms: 1700000000000,
          events: [
            { name: 'channel_occupied', channel: `private-${store.codename}_orders` },
            { name: 'member_added', channel: `presence-${store.codename}_lobby`, user_id: owner.id },
          ],
        });
        const res = await t.http.post(WEBHOOK).set(headers).send(text).expect(200);
        expect(res.body).toEqual({ status: 'OK', received: 2 });
        await waitFor('webhook events', () => (got.length >= 2 ? got : undefined));
        expect(got.map((m) => m.data)).toEqual([
          { name: 'channel_occupied', channel: `private-${store.codename}_orders`, timeMs: 1700000000000, storeId: store.storeId },
          { name: 'member_added', channel: `presence-${store.codename}_lobby`, userId: owner.id, timeMs: 1700000000000, storeId: store.storeId },
        ]);
      } finally {
        stop();
      }
    });

    it('refuses a bad signature, another key or a changed body, and publishes nothing', async () => {
      const got: BrokerMessage[] = [];
      const stop = await t.app.get(Broker).subscribe('auth-realtime-webhook', (m) => void got.push(m));
      try {
        const body = { time_ms: 1, events: [{ name: 'channel_vacated', channel: `private-${store.codename}_orders` }] };
        const forged = webhook(body, { key: APP.key, secret: 'guessed' });
        expectError(await t.http.post(WEBHOOK).set(forged.headers).send(forged.text), 401, 'RealtimeWebhookInvalid');
        const otherKey = webhook(body, { key: 'someone-else', secret: APP.secret });
        expectError(await t.http.post(WEBHOOK).set(otherKey.headers).send(otherKey.text), 401, 'RealtimeWebhookInvalid');
        const good = webhook(body);
        expectError(await t.http.post(WEBHOOK).set(good.headers).send(good.text.replace('vacated', 'occupied')), 401, 'RealtimeWebhookInvalid');
        expectError(await t.http.post(WEBHOOK).set('content-type', 'application/json').send(good.text), 401, 'RealtimeWebhookInvalid');
        await new Promise((r) => setTimeout(r, 200));
        expect(got).toEqual([]);
      } finally {
        stop();
      }
    });
  });

  describe('forward rules', () => {
    it('send the service\'s own events to the channel of their store only', async () => {
      const user = await userOf(t, store);
      const sent = await waitFor('the forwarded user.created', () =>
        api.requests.find((r) => r.path.endsWith('/events') && (r.body as { name?: string })?.name === 'user-created' && (r.body as { data: string }).data.includes(user.id)),
      );
      expect(sent.signed).toBe(true);
      expect((sent.body as { channels: string[] }).channels).toEqual([`private-${store.codename}_admin-users`]);
      const data = JSON.parse((sent.body as { data: string }).data);
      expect(data).toMatchObject({ id: user.id, storeId: store.storeId });
      expect(JSON.stringify(data)).not.toMatch(/password/i);
    });

    it('go to channels that /realtime/auth opens to the store\'s admins only', async () => {
      const user = await userOf(t, store);
      const sent = await waitFor('the forwarded user.created', () =>
        api.requests.find((r) => (r.body as { name?: string })?.name === 'user-created' && (r.body as { data: string }).data.includes(user.id)),
      );
      const [channel] = (sent.body as { channels: string[] }).channels;
      // The event carries the user's email: not for the store's other users, nor for the user.
      expect((sent.body as { data: string }).data).toContain('@');
      expectError(await authorize(user.token, channel), 403, 'RealtimeChannelForbidden');
      const res = await authorize(owner.token, channel).expect(200);
      expect(res.body).toEqual({ auth: signature(`123.456:${channel}`) });
    });

    it('name each store\'s own channel, for aliases of database events too', async () => {
      const other = await registerStore(t.http);
      const lobby = await waitFor('the forwarded store.created', () => api.requests.find((r) => (r.body as { name?: string })?.name === 'store-created'));
      expect((lobby.body as { channels: string[] }).channels).toEqual([`presence-${other.codename}_admin-lobby`]);
      const users = await waitFor('the forwarded owner', () => api.requests.find((r) => (r.body as { name?: string })?.name === 'user-created'));
      expect((users.body as { channels: string[] }).channels).toEqual([`private-${other.codename}_admin-users`]);
      expect(api.requests.flatMap((r) => (r.body as { channels?: string[] })?.channels ?? []).filter((c) => c.includes(store.codename))).toEqual([]);
    });
  });

  // Every replica reads every broker topic; the event must still reach the provider once.
  itIf(process.env.REDIS_URL, 'needs REDIS_URL: one process has no second replica without it')('forward each event once with two replicas on one broker', async () => {
    const replica = await startApp(realtimeApp(api));
    try {
      const user = await userOf(t, store);
      const forwarded = () => api.requests.filter((r) => (r.body as { name?: string })?.name === 'user-created' && (r.body as { data: string }).data.includes(user.id));
      await waitFor('the forwarded user.created', () => (forwarded().length ? true : undefined));
      await new Promise((r) => setTimeout(r, 500));
      expect(forwarded()).toHaveLength(1);
    } finally {
      await replica.close();
    }
  });

  describe('pusher-js', () => {
    let sockets: FakePusherSocketServer;
    let base: string;
    const clients: Pusher[] = [];

    beforeAll(async () => {
      sockets = new FakePusherSocketServer();
      await sockets.start();
      base = await listen(t);
    });
    afterAll(async () => {
      for (const c of clients) c.disconnect();
      await sockets?.stop();
    });

    const client = (token?: string) => {
      const headers = { ...(token && { Authorization: bearer(token) }), [HEADER]: store.codename };
      const c = new Pusher(APP.key, {
        cluster: 'eu',
        wsHost: '127.0.0.1',
        wsPort: sockets.port,
        forceTLS: false,
        enabledTransports: ['ws'],
        channelAuthorization: { endpoint: `${base}${AUTH}`, transport: 'ajax', headers },
        userAuthentication: { endpoint: `${base}${USER_AUTH}`, transport: 'ajax', headers },
      });
      clients.push(c);
      return c;
    };

    const outcome = (channel: ReturnType<Pusher['subscribe']>) =>
      new Promise<string>((resolve) => {
        channel.bind('pusher:subscription_succeeded', () => resolve('subscribed'));
        channel.bind('pusher:subscription_error', (e: { status?: number }) => resolve(`error ${e.status}`));
      });

    it('subscribes to a private channel of its store, authorized through /realtime/auth', async () => {
      const channelName = `private-${store.codename}_orders`;
      const result = await outcome(client(owner.token).subscribe(channelName));
      expect(result).toBe('subscribed');
      expect(sockets.subscriptions).toContainEqual({ channel: channelName, ok: true });
    });

    it('is refused another store\'s channel and cannot subscribe without a login', async () => {
      const other = await registerStore(t.http);
      expect(await outcome(client(owner.token).subscribe(`private-${other.codename}_orders`))).toBe('error 403');
      expect(await outcome(client().subscribe(`private-${store.codename}_orders`))).toBe('error 401');
      expect(sockets.subscriptions.map((s) => s.channel)).not.toContain(`private-${other.codename}_orders`);
    });

    it('signs in as the user through /realtime/user-auth', async () => {
      const c = client(owner.token);
      c.signin();
      const signin = await waitFor('the signin', () => sockets.signins.find((s) => (s.userData as { id?: string })?.id === owner.id));
      expect(signin).toEqual({ userData: { id: owner.id, name: 'Store Owner' }, ok: true });
    });
  });
});

describe('realtime channel, not configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t?.close());

  it('answers its routes with 404 RealtimeChannelDisabled', async () => {
    const store = await registerStore(t.http);
    const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const as = (path: string) => t.http.post(path).set(HEADER, store.codename).set('Authorization', bearer(accessToken));
    expectError(await as(AUTH).send({ socket_id: '1.2', channel_name: `private-${store.codename}_a` }), 404, 'RealtimeChannelDisabled');
    expectError(await as(USER_AUTH).send({ socket_id: '1.2' }), 404, 'RealtimeChannelDisabled');
    const { headers, text } = webhook({ time_ms: 1, events: [] });
    expectError(await t.http.post(WEBHOOK).set(headers).send(text), 404, 'RealtimeChannelDisabled');
  });
});

describe('realtime channel settings', () => {
  // The other boot refusals are shown where they are decided: realtime-forwarder.spec.ts and
  // realtime-provider.e2e-spec.ts.
  it('refuse to boot with a forward rule that would leave its store or reach more than its admins, an inline secret or an unknown key', async () => {
    const base = { appId: '1', key: 'k', secret: { env: 'REALTIME_SECRET' }, cluster: 'eu' };
    // Without Redis: the refusal does not depend on it, and a boot refused while its Redis
    // connections are still opening can leave an unhandled "Connection is closed" behind.
    const boot = (realtimeChannel: unknown) => startApp({ env: { REALTIME_SECRET: 's', REDIS_URL: undefined }, settings: { realtimeChannel } as never });
    await expect(boot({ ...base, forwardRules: [{ topic: 'user.created', channel: 'private-users', event: 'e' }] })).rejects.toThrow(/forwardRules\[0\]\.channel: .*events stay in their store/);
    await expect(boot({ ...base, forwardRules: [{ topic: 'user.created', channel: 'private-{storeCodename}_admin', event: 'e'.repeat(201) }] })).rejects.toThrow(/forwardRules\.0\.event: event must be shorter than or equal to 200/);
    // A public channel needs no /realtime/auth; any other than the admin channel, any user's.
    const forwardTo = (channel: string) => boot({ ...base, forwardRules: [{ topic: 'user.created', channel: 'private-{storeCodename}_admin', event: 'e' }, { topic: 'user.created', channel, event: 'e' }] });
    await expect(forwardTo('{storeCodename}_admin-users')).rejects.toThrow(/forwardRules\[1\]\.channel: "\{storeCodename\}_admin-users" is public/);
    await expect(forwardTo('private-{storeCodename}_users')).rejects.toThrow(/forwardRules\[1\]\.channel: "private-\{storeCodename\}_users" is open to every user of the store/);
    await expect(boot({ ...base, secret: 'inline' })).rejects.toThrow(/realtimeChannel\.secret/);
    await expect(boot({ ...base, forwardRules: [], colour: 'blue' })).rejects.toThrow(/colour/);
  });
});
