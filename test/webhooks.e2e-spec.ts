import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { ManualClock, DAY_MS } from '../src/platform/clock/clock.js';
import { RETRY_DELAYS_MS } from '../src/channels/webhooks/webhook-deliveries.js';
import { expectError, login, PASSWORD, registerStore, startApp, SUPER_ADMIN, unique, uniqueEmail, waitFor, type RegisteredStore, type TestApp } from './helpers.js';
import { WebhookReceiver, type Received } from './webhook-receiver.js';

const HEADER = 'svc-store-codename';
const OPEN = { webhooks: { allowHttp: true, allowPrivateNetworks: true, maxEndpointsPerStore: 3, timeoutMs: 2000 } };

interface Admin {
  store: RegisteredStore;
  token: string;
}

async function admin(t: TestApp): Promise<Admin> {
  const store = await registerStore(t.http);
  const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  return { store, token: accessToken };
}

function as(t: TestApp, a: Admin) {
  const auth = <T extends { set(name: string, value: string): T }>(req: T) => req.set(HEADER, a.store.codename).set('Authorization', `Bearer ${a.token}`);
  return {
    create: (body: object) => auth(t.http.post('/auth-api/v1/webhooks')).send(body),
    list: (query = '') => auth(t.http.get(`/auth-api/v1/webhooks${query}`)),
    get: (id: string) => auth(t.http.get(`/auth-api/v1/webhooks/${id}`)),
    patch: (id: string, body: object) => auth(t.http.patch(`/auth-api/v1/webhooks/${id}`)).send(body),
    delete: (id: string) => auth(t.http.delete(`/auth-api/v1/webhooks/${id}`)),
    rotate: (id: string) => auth(t.http.post(`/auth-api/v1/webhooks/${id}/rotate-secret`)),
    test: (id: string) => auth(t.http.post(`/auth-api/v1/webhooks/${id}/test`)),
    deliveries: (id: string, query = '') => auth(t.http.get(`/auth-api/v1/webhooks/${id}/deliveries${query}`)),
    retry: (id: string, deliveryId: string) => auth(t.http.post(`/auth-api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`)),
    addUser: () => auth(t.http.post('/auth-api/users')).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Member' }),
  };
}

function headersOf(r: Received): Record<string, string> {
  return { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
}

function arrived(receiver: WebhookReceiver, path: string, n = 1): Promise<Received[]> {
  return waitFor(`${n} deliveries to ${path}`, () => (receiver.to(path).length >= n ? receiver.to(path) : undefined));
}

describe('webhooks: endpoints, signed deliveries, the delivery log', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let a: Admin;
  beforeAll(async () => {
    [t, receiver] = await Promise.all([startApp({ env: { SERVICE_CODENAME: unique('wh') }, settings: OPEN }), WebhookReceiver.start()]);
  });
  // a store of its own per test: its endpoints count towards its limit only
  beforeEach(async () => {
    a = await admin(t);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('creates an endpoint: 201, the secret (whsec_ + 32 bytes) once; list, get and patch never show it', async () => {
    const res = await as(t, a).create({ url: receiver.url('/crud'), topics: ['user-created'], description: 'CRM sync' }).expect(201);
    const hook = res.body.webhook;
    expect(hook).toMatchObject({ url: receiver.url('/crud'), topics: ['user-created'], description: 'CRM sync', enabled: true, disabledReason: null });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(32);
    const listed = await as(t, a).list().expect(200);
    expect(listed.body.webhooks.map((w: { id: string }) => w.id)).toContain(hook.id);
    expect(listed.body.paging).toMatchObject({ pageNumber: 1, totalRowCount: expect.any(Number) });
    const got = await as(t, a).get(hook.id).expect(200);
    const patched = await as(t, a).patch(hook.id, { topics: ['user-created', 'user-deleted'], enabled: false }).expect(200);
    expect(patched.body.webhook).toMatchObject({ topics: ['user-created', 'user-deleted'], enabled: false });
    for (const body of [listed.body, got.body, patched.body]) expect(JSON.stringify(body)).not.toContain(hook.secret.slice(6, 20));
    await as(t, a).delete(hook.id).expect(200);
    expectError(await as(t, a).get(hook.id), 404, 'WebhookNotFound');
  });

  it('an unknown topic → 400 WebhookTopicUnknown naming it; a bad URL → 400 WebhookUrlRefused', async () => {
    const res = await as(t, a).create({ url: receiver.url(), topics: ['user-created', 'user-exploded'] });
    expectError(res, 400, 'WebhookTopicUnknown');
    expect(res.body.errMsg ?? JSON.stringify(res.body)).toContain('user-exploded');
    expectError(await as(t, a).create({ url: 'ftp://127.0.0.1/x', topics: ['*'] }), 400, 'WebhookUrlRefused');
    expectError(await as(t, a).create({ url: 'not a url', topics: ['*'] }), 400, 'WebhookUrlRefused');
  });

  it('at most webhooks.maxEndpointsPerStore endpoints → 409 WebhookLimitReached', async () => {
    const b = await admin(t);
    for (let i = 0; i < 3; i++) await as(t, b).create({ url: receiver.url(`/limit${i}`), topics: ['*'] }).expect(201);
    expectError(await as(t, b).create({ url: receiver.url('/limit3'), topics: ['*'] }), 409, 'WebhookLimitReached');
  });

  it('a user created in the store is delivered, signed (standardwebhooks verifies it), shaped as the API shows a user', async () => {
    const hook = (await as(t, a).create({ url: receiver.url('/users'), topics: ['user-created'] }).expect(201)).body.webhook;
    const user = (await as(t, a).addUser().expect(201)).body;
    const [got] = await arrived(receiver, '/users');
    const verified = new Webhook(hook.secret).verify(got.body, headersOf(got)) as Record<string, unknown>;
    expect(verified).toMatchObject({ type: 'user-created', storeId: a.store.storeId, storeCodename: a.store.codename, data: { id: expect.any(String), storeId: a.store.storeId } });
    expect(new Date(verified.timestamp as string).toISOString()).toBe(verified.timestamp);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.body).not.toMatch(/passwordHash|\$2[aby]\$|_owner/);
    expect(JSON.stringify(user)).toContain((verified.data as { id: string }).id);
    // the delivery log
    const log = await as(t, a).deliveries(hook.id).expect(200);
    expect(log.body.deliveries).toEqual([expect.objectContaining({ eventId: got.headers['webhook-id'], topic: 'user-created', status: 'delivered', attempts: 1, responseStatus: 200, responseBody: 'answered 200', nextAttemptAt: null })]);
    expect(log.body.deliveries[0].durationMs).toEqual(expect.any(Number));
  });

  it('audit:<action> topics: a refused sign-in is delivered as its audit entry', async () => {
    const hook = (await as(t, a).create({ url: receiver.url('/audit'), topics: ['audit:user.login.failed'] }).expect(201)).body.webhook;
    await t.http.post('/auth-api/login').set(HEADER, a.store.codename).send({ username: a.store.ownerEmail, password: 'wrong-password-1' }).expect(401);
    const [got] = await arrived(receiver, '/audit');
    const verified = new Webhook(hook.secret).verify(got.body, headersOf(got)) as { type: string; data: { action: string; id: string } };
    expect(verified).toMatchObject({ type: 'audit:user.login.failed', data: { action: 'user.login.failed' } });
    expect(got.headers['webhook-id']).toBe(verified.data.id);
    expect(got.body).not.toContain('wrong-password-1');
  });

  it('POST /:id/test sends webhook.test now and answers its delivery; a failed one is retried by hand', async () => {
    const hook = (await as(t, a).create({ url: receiver.url('/test'), topics: ['user-deleted'] }).expect(201)).body.webhook;
    receiver.answer = (path) => (path === '/test' ? 503 : 200);
    const first = (await as(t, a).test(hook.id).expect(200)).body.delivery;
    expect(first).toMatchObject({ topic: 'webhook.test', status: 'pending', attempts: 1, responseStatus: 503 });
    expect(new Date(first.nextAttemptAt).getTime()).toBeGreaterThan(Date.now());
    receiver.answer = () => 200;
    const retried = (await as(t, a).retry(hook.id, first.id).expect(200)).body.delivery;
    expect(retried).toMatchObject({ id: first.id, status: 'delivered', attempts: 2, responseStatus: 200 });
    const [one, two] = receiver.to('/test');
    expect(one.headers['webhook-id']).toBe(two.headers['webhook-id']);
    expect(JSON.parse(two.body)).toMatchObject({ type: 'webhook.test', data: { webhookId: hook.id } });
    const delivered = await as(t, a).deliveries(hook.id, '?status=delivered').expect(200);
    expect(delivered.body.deliveries.map((d: { id: string }) => d.id)).toEqual([first.id]);
    expect((await as(t, a).deliveries(hook.id, '?status=failed').expect(200)).body.deliveries).toEqual([]);
  });

  it('rotating the secret: the new one once; both sign during the overlap (two signatures)', async () => {
    const hook = (await as(t, a).create({ url: receiver.url('/rotate'), topics: ['user-created'] }).expect(201)).body.webhook;
    const rotated = (await as(t, a).rotate(hook.id).expect(200)).body.webhook;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    await as(t, a).test(hook.id).expect(200);
    const [got] = await arrived(receiver, '/rotate');
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => new Webhook(rotated.secret).verify(got.body, headersOf(got))).not.toThrow();
    expect(() => new Webhook(hook.secret).verify(got.body, headersOf(got))).not.toThrow();
  });

  it('410 Gone disables the endpoint at once, in the audit log', async () => {
    const hook = (await as(t, a).create({ url: receiver.url('/gone'), topics: ['user-created'] }).expect(201)).body.webhook;
    receiver.answer = (path) => (path === '/gone' ? 410 : 200);
    const delivery = (await as(t, a).test(hook.id).expect(200)).body.delivery;
    receiver.answer = () => 200;
    expect(delivery).toMatchObject({ status: 'failed', responseStatus: 410 });
    expect((await as(t, a).get(hook.id).expect(200)).body.webhook).toMatchObject({ enabled: false, disabledReason: 'gone' });
    const audit = await waitFor('webhook.disabled in the audit log', async () => {
      const res = await t.http.get('/auth-api/v1/auditlogs?action=webhook.disabled').set(HEADER, a.store.codename).set('Authorization', `Bearer ${a.token}`).expect(200);
      return res.body.auditLogs?.length ? res.body.auditLogs : undefined;
    });
    expect(audit[0]).toMatchObject({ action: 'webhook.disabled', reason: 'gone', target: { type: 'webhook', id: hook.id } });
    // nothing more is sent to it
    await as(t, a).addUser().expect(201);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.to('/gone')).toHaveLength(1);
  });

  it('another store\'s endpoints and deliveries are not found; its list shows none of ours', async () => {
    const hook = (await as(t, a).create({ url: receiver.url('/mine'), topics: ['user-created'] }).expect(201)).body.webhook;
    const other = await admin(t);
    expectError(await as(t, other).get(hook.id), 404, 'WebhookNotFound');
    expectError(await as(t, other).patch(hook.id, { enabled: false }), 404, 'WebhookNotFound');
    expectError(await as(t, other).delete(hook.id), 404, 'WebhookNotFound');
    expectError(await as(t, other).deliveries(hook.id), 404, 'WebhookNotFound');
    expectError(await as(t, other).test(hook.id), 404, 'WebhookNotFound');
    expect((await as(t, other).list().expect(200)).body.webhooks).toEqual([]);
    // and another store's events are not sent to ours
    await as(t, other).addUser().expect(201);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.to('/mine')).toHaveLength(0);
  });

  it('a user of the store who is not an administrator: 403', async () => {
    const email = uniqueEmail();
    await as(t, a).addUser().expect(201);
    await t.http.post('/auth-api/users').set(HEADER, a.store.codename).set('Authorization', `Bearer ${a.token}`).send({ email, password: PASSWORD, fullname: 'Plain' }).expect(201);
    const { accessToken } = await login(t.http, email, PASSWORD, a.store.codename);
    const res = await t.http.get('/auth-api/v1/webhooks').set(HEADER, a.store.codename).set('Authorization', `Bearer ${accessToken}`);
    expect(res.status).toBe(403);
  });

  it('a SaaS administrator manages any store it targets', async () => {
    const root = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    const res = await t.http.post('/auth-api/v1/webhooks').set(HEADER, a.store.codename).set('Authorization', `Bearer ${root.accessToken}`).send({ url: receiver.url('/saas'), topics: ['*'] });
    expect(res.status).toBe(201);
    expect((await as(t, a).get(res.body.webhook.id).expect(200)).body.webhook.url).toBe(receiver.url('/saas'));
  });
});

// With KEY_ENCRYPTION_SECRET the secret is sealed at rest. The app runs decades ahead: the
// signing key it makes (sealed with its secret) is usable at its time only, never by the other
// files' apps on the shared database, which run without the secret.
describe('webhooks: secrets at rest, with KEY_ENCRYPTION_SECRET', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const clock = new ManualClock(new Date(Date.now() + (30_000 + Math.floor(Math.random() * 200_000)) * DAY_MS));
  beforeAll(async () => {
    [t, receiver] = await Promise.all([startApp({ clock, env: { SERVICE_CODENAME: unique('whk'), KEY_ENCRYPTION_SECRET: 'webhook-test-key-encryption-secret-32+' }, settings: OPEN }), WebhookReceiver.start()]);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('are stored sealed (the database never holds one as given), and still sign', async () => {
    const a = await admin(t);
    const hook = (await as(t, a).create({ url: receiver.url('/sealed'), topics: ['user-created'] }).expect(201)).body.webhook;
    const [row] = (await t.app.get(DataSource).query(`SELECT "secret" FROM "webhook_endpoints" WHERE "id" = $1`, [hook.id])) as { secret: string }[];
    expect(row.secret).toMatch(/^enc:v1:/);
    expect(row.secret).not.toContain(hook.secret.slice(6));
    await as(t, a).test(hook.id).expect(200);
    const [got] = await arrived(receiver, '/sealed');
    // signed at the app's time, decades ahead: checked as of then
    expect(() => new Webhook(hook.secret).verify(got.body, headersOf(got))).toThrow(/timestamp/i);
    expect(String(got.headers['webhook-signature'])).toBe(`v1,${createHmac('sha256', Buffer.from(hook.secret.slice(6), 'base64')).update(`${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`).digest('base64')}`);
  });
});

describe('webhooks: refused addresses (SSRF), at creation and at every attempt', () => {
  let t: TestApp;
  let a: Admin;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    [t, receiver] = await Promise.all([startApp({ env: { SERVICE_CODENAME: unique('whs') }, settings: { webhooks: { allowHttp: false, allowPrivateNetworks: false } } }), WebhookReceiver.start()]);
    a = await admin(t);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  // Every URL here is refused; one wrongly accepted is deleted at once, before any event.
  async function refused(url: string, reason: RegExp): Promise<void> {
    const res = await as(t, a).create({ url, topics: ['user-created'] });
    if (res.status === 201) await as(t, a).delete(res.body.webhook.id);
    expectError(res, 400, 'WebhookUrlRefused');
    expect(res.body.errMsg ?? JSON.stringify(res.body)).toMatch(reason);
  }

  it.each([
    ['http without allowHttp', receiver => receiver.url('/x'), /https is required/],
    ['loopback IPv4', () => 'https://127.0.0.1/x', /loopback/],
    ['loopback, another address of 127/8', () => 'https://127.1.2.3/x', /loopback/],
    ['loopback IPv6', () => 'https://[::1]/x', /loopback/],
    ['IPv4 mapped in IPv6', () => 'https://[::ffff:127.0.0.1]/x', /loopback/],
    ['a name that resolves to 127.0.0.1', () => 'https://localhost/x', /localhost resolves to (127\.0\.0\.1|::1)/],
    ['a private network', () => 'https://10.1.2.3/x', /private/],
    ['a private network (192.168/16)', () => 'https://192.168.0.10/x', /private/],
    ['a private network (172.16/12)', () => 'https://172.20.0.1/x', /private/],
    ['the cloud metadata address', () => 'https://169.254.169.254/latest/meta-data', /link-local/],
    ['carrier-grade NAT', () => 'https://100.64.0.1/x', /carrier-grade/],
    ['multicast', () => 'https://224.0.0.1/x', /multicast/],
    ['unique local IPv6', () => 'https://[fd00::1]/x', /unique local/],
    ['link-local IPv6', () => 'https://[fe80::1]/x', /link-local/],
    ['the unspecified address', () => 'https://0.0.0.0/x', /this network/],
  ] as Array<[string, (r: WebhookReceiver) => string, RegExp]>)('refused: %s', async (_, url, reason) => {
    await refused(url(receiver), reason);
  });

  it('a name that resolves to 127.0.0.1 only at delivery time is refused then, and nothing reaches it', async () => {
    // `.invalid` never resolves: accepted (each attempt resolves it again)
    const hook = (await as(t, a).create({ url: 'https://rebinding.invalid/hook', topics: ['user-created'] }).expect(201)).body.webhook;
    // the name now answers 127.0.0.1, as a rebinding DNS would: written where the service reads it
    await t.app.get(DataSource).query(`UPDATE "webhook_endpoints" SET "url" = $2 WHERE "id" = $1`, [hook.id, `https://localhost:${receiver.port}/rebound`]);
    const delivery = (await as(t, a).test(hook.id).expect(200)).body.delivery;
    expect(delivery).toMatchObject({ status: 'pending', responseStatus: null, error: expect.stringMatching(/refused: localhost resolves to (127\.0\.0\.1|::1)/) });
    expect(receiver.received).toHaveLength(0);
    await as(t, a).delete(hook.id).expect(200);
  });
});

describe('webhooks: the retry schedule and disabling a failing endpoint (controllable clock)', () => {
  let t: TestApp;
  let a: Admin;
  let receiver: WebhookReceiver;
  const clock = new ManualClock(new Date(Date.now()));
  beforeAll(async () => {
    [t, receiver] = await Promise.all([startApp({ env: { SERVICE_CODENAME: unique('whc') }, settings: OPEN, clock }), WebhookReceiver.start()]);
    a = await admin(t);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (up to 10 % later); failed after the eighth', async () => {
    receiver.answer = () => 500;
    const hook = (await as(t, a).create({ url: receiver.url('/down'), topics: ['user-created'] }).expect(201)).body.webhook;
    let delivery = (await as(t, a).test(hook.id).expect(200)).body.delivery;
    for (const [i, delay] of RETRY_DELAYS_MS.entries()) {
      expect(delivery).toMatchObject({ status: 'pending', attempts: i + 1, responseStatus: 500, error: null });
      const wait = new Date(delivery.nextAttemptAt).getTime() - new Date(delivery.lastAttemptAt).getTime();
      expect(wait).toBeGreaterThanOrEqual(delay);
      expect(wait).toBeLessThanOrEqual(delay * 1.1 + 1);
      // not before its time
      clock.advance(delay - 1000);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.to('/down')).toHaveLength(i + 1);
      clock.advance(Math.ceil(delay * 0.1) + 1000);
      delivery = await waitFor(`attempt ${i + 2}`, async () => {
        const [row] = (await as(t, a).deliveries(hook.id).expect(200)).body.deliveries;
        return row.attempts === i + 2 ? row : undefined;
      });
    }
    expect(delivery).toMatchObject({ status: 'failed', attempts: 8, nextAttemptAt: null });
    expect(new Set(receiver.to('/down').map((r) => r.headers['webhook-id'])).size).toBe(1);
  }, 120_000);

  it('an endpoint failing for webhooks.disableAfterFailingDays is disabled, and its owner told', async () => {
    receiver.answer = () => 500;
    const hook = (await as(t, a).create({ url: receiver.url('/failing'), topics: ['user-created'] }).expect(201)).body.webhook;
    await as(t, a).test(hook.id).expect(200);
    clock.advance(4 * DAY_MS);
    await as(t, a).test(hook.id).expect(200);
    expect((await as(t, a).get(hook.id).expect(200)).body.webhook.enabled).toBe(true);
    clock.advance(DAY_MS + 1000);
    await as(t, a).test(hook.id).expect(200);
    expect((await as(t, a).get(hook.id).expect(200)).body.webhook).toMatchObject({ enabled: false, disabledReason: 'failing' });
    const inbox = await waitFor('the owner\'s notice', async () => {
      const res = await t.http.get('/notifications').set(HEADER, a.store.codename).set('Authorization', `Bearer ${a.token}`);
      const items = (res.body.notifications ?? res.body.inbox ?? []) as { template?: string; subject?: string }[];
      return items.some((n) => JSON.stringify(n).includes('webhook')) ? items : undefined;
    });
    expect(JSON.stringify(inbox)).toContain(receiver.url('/failing'));
  });
});
