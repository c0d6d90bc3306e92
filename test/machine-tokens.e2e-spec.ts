import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { ManualClock } from '../src/platform/clock/clock.js';
import type { SettingsOverrides } from '../src/settings.js';
import { mintMachineToken } from '../src/identity/m2m/machine-token.js';
import { login, PASSWORD, registerStore, startApp, type RegisteredStore, type TestApp, expectError, describeWithRedis, expectSocketsReleased, openSockets } from './helpers.js';

// Machine-to-machine tokens seen from another service: an Ed25519-signed token bound to the
// request's method, path and exact body, used once, from a service listed in settings, valid
// 15 minutes; block and allow lists
// apply in staging and production only. The route used is the internal POST /validateapikey,
// which accepts machines only.

const VALIDATE = '/auth-api/validateapikey';
const TOKEN_HEADER = 'svc-machine-token';
const HEADER = 'svc-store-codename';
const MINUTE_MS = 60_000;

const billing = generateKeyPairSync('ed25519');
const reports = generateKeyPairSync('ed25519');
const impostor = generateKeyPairSync('ed25519');
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }) as string;


// The body as the exact bytes the token is made for, sent as they are.
function post(t: TestApp, body: string, token?: string) {
  const req = t.http.post(VALIDATE).set('Content-Type', 'application/json');
  if (token !== undefined) req.set(TOKEN_HEADER, token);
  return req.send(body);
}

function mint(service: string, privateKey: KeyObject, body: string, now?: Date, route = { method: 'POST', path: VALIDATE }): Promise<string> {
  return mintMachineToken({ service, privateKey, body, now, ...route });
}

const bodyFor = (apiKey: string) => JSON.stringify({ apiKey });

// billing by PEM in settings, reports by an environment variable.
const SERVICES = [
  { name: 'billing', publicKey: pem(billing.publicKey) },
  { name: 'reports', publicKey: { env: 'REPORTS_PUBLIC_KEY' } },
];

function machineSettings(over: Partial<NonNullable<SettingsOverrides['machineTokens']>> = {}): SettingsOverrides {
  return { machineTokens: { services: SERVICES, machineToMachineBlockList: [], allowedM2MClients: [], ...over } };
}

function boot(opts: { env?: Record<string, string>; settings?: SettingsOverrides; clock?: ManualClock } = {}): Promise<TestApp> {
  return startApp({ env: { REPORTS_PUBLIC_KEY: pem(reports.publicKey), ...opts.env }, settings: opts.settings ?? machineSettings(), clock: opts.clock });
}

interface KeyFixture {
  store: RegisteredStore;
  key: string;
  id: string;
  accessToken: string;
}

async function keyOfNewStore(t: TestApp): Promise<KeyFixture> {
  const store = await registerStore(t.http);
  const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  const res = await t.http.post('/auth-api/v1/apikeys').set(HEADER, store.codename).set('Authorization', `Bearer ${accessToken}`).send({ name: 'for billing' }).expect(201);
  return { store, key: res.body.apiKey.key, id: res.body.apiKey.id, accessToken };
}

describe('machine tokens (test mode)', () => {
  let t: TestApp;
  let fx: KeyFixture;
  beforeAll(async () => {
    t = await boot();
    fx = await keyOfNewStore(t);
  });
  afterAll(() => t?.close());

  it('valid: 200 with the key\'s session', async () => {
    const body = bodyFor(fx.key);
    const res = await post(t, body, await mint('billing', billing.privateKey, body)).expect(200);
    expect(res.body).toEqual({
      status: 'OK',
      session: expect.objectContaining({ sessionId: fx.id, userId: fx.store.ownerId, storeId: fx.store.storeId, roles: ['tenantOwner'], email: fx.store.ownerEmail, principal: 'apiKey' }),
    });
    expect(JSON.stringify(res.body)).not.toContain(fx.key);
  });

  it('valid from a service whose public key comes from the environment', async () => {
    const body = bodyFor(fx.key);
    const res = await post(t, body, await mint('reports', reports.privateKey, body)).expect(200);
    expect(res.body).toMatchObject({ status: 'OK', session: { userId: fx.store.ownerId } });
  });

  it('a valid token for an unknown or deleted API key → 401', async () => {
    const unknown = bodyFor(`sk_svc_${'0'.repeat(48)}`);
    expectError(await post(t, unknown, await mint('billing', billing.privateKey, unknown)), 401, 'Unauthorized');
    const notAKey = bodyFor('not-a-key');
    expectError(await post(t, notAKey, await mint('billing', billing.privateKey, notAKey)), 401, 'Unauthorized');

    const gone = await keyOfNewStore(t);
    const body = bodyFor(gone.key);
    await post(t, body, await mint('billing', billing.privateKey, body)).expect(200);
    await t.http.delete(`/auth-api/v1/apikeys/${gone.id}`).set(HEADER, gone.store.codename).set('Authorization', `Bearer ${gone.accessToken}`).expect(200);
    expectError(await post(t, body, await mint('billing', billing.privateKey, body)), 401, 'Unauthorized');
  });

  it('the body changed after signing → 401, even when only its bytes differ', async () => {
    const other = await keyOfNewStore(t);
    const signed = bodyFor(fx.key);
    const token = await mint('billing', billing.privateKey, signed);
    expectError(await post(t, bodyFor(other.key), token), 401, 'Unauthorized');
    expectError(await post(t, JSON.stringify({ apiKey: fx.key }, null, 2), token), 401, 'Unauthorized');
    // the same token with the body it was made for still passes
    await post(t, signed, token).expect(200);
  });

  it('a token is used once: the same token again → 401, even with the same request', async () => {
    const body = bodyFor(fx.key);
    const token = await mint('billing', billing.privateKey, body);
    await post(t, body, token).expect(200);
    const replay = await post(t, body, token);
    expectError(replay, 401, 'Unauthorized');
    expect(replay.body.detail).toMatch(/already used/);
    // a new token for the same request is fine
    await post(t, body, await mint('billing', billing.privateKey, body)).expect(200);
  });

  it('a token made for another method or path (query string included) → 401, and stays unspent', async () => {
    const body = bodyFor(fx.key);
    for (const route of [
      { method: 'PUT', path: VALIDATE },
      { method: 'POST', path: '/auth-api/v1/apikeys' },
      { method: 'POST', path: `${VALIDATE}?for=reports` },
    ]) {
      const refused = await post(t, body, await mint('billing', billing.privateKey, body, undefined, route));
      expectError(refused, 401, 'Unauthorized');
      expect(refused.body.detail).toMatch(/another route/);
    }
    const token = await mint('billing', billing.privateKey, body, undefined, { method: 'POST', path: `${VALIDATE}?for=reports` });
    expectError(await post(t, body, token), 401, 'Unauthorized'); // sent without the query string
    await t.http.post(`${VALIDATE}?for=reports`).set('Content-Type', 'application/json').set(TOKEN_HEADER, token).send(body).expect(200);
  });

  it('a token signed with another key pair claiming billing, or from an unknown service → 401', async () => {
    const body = bodyFor(fx.key);
    expectError(await post(t, body, await mint('billing', impostor.privateKey, body)), 401, 'Unauthorized');
    expectError(await post(t, body, await mint('reports', billing.privateKey, body)), 401, 'Unauthorized');
    expectError(await post(t, body, await mint('shipping', impostor.privateKey, body)), 401, 'Unauthorized');
  });

  it('a token that is not a signed machine token → 401', async () => {
    const body = bodyFor(fx.key);
    const valid = await mint('billing', billing.privateKey, body);
    const [, payload] = valid.split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expectError(await post(t, body, unsigned), 401, 'Unauthorized');
    expectError(await post(t, body, `${valid.slice(0, -4)}AAAA`), 401, 'Unauthorized');
    expectError(await post(t, body, 'garbage'), 401, 'Unauthorized');
    expectError(await post(t, body, ''), 401, 'Unauthorized');
  });

  it('no token → 401; a user\'s access token instead → 401 (machines only); an API key → 401', async () => {
    const body = bodyFor(fx.key);
    expectError(await post(t, body), 401, 'Unauthorized');
    expectError(await post(t, body).set('Authorization', `Bearer ${fx.accessToken}`).set(HEADER, fx.store.codename), 401, 'Unauthorized');
    expectError(await post(t, body, fx.accessToken), 401, 'Unauthorized');
    expectError(await post(t, body).set('Authorization', `Bearer ${fx.key}`), 401, 'PrincipalNotAccepted');
  });

  it('a machine token is not accepted on routes for users or API keys', async () => {
    const token = await mint('billing', billing.privateKey, '');
    expectError(await t.http.get('/auth-api/v1/users').set(HEADER, fx.store.codename).set(TOKEN_HEADER, token), 401, 'Unauthorized');
    const me = await t.http.get('/auth-api/currentuser').set(HEADER, fx.store.codename).set(TOKEN_HEADER, token).expect(401);
    expect(me.body).toEqual({ status: 'ERR', message: 'No login found' });
  });
});


describeWithRedis('machine tokens on two replicas', 'without it each instance remembers its own jtis, by design', () => {
  let a: TestApp;
  let b: TestApp;
  let fx: KeyFixture;
  beforeAll(async () => {
    [a, b] = await Promise.all([boot(), boot()]);
    fx = await keyOfNewStore(a);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('a token used on A is refused on B, at the same moment too', async () => {
    const body = bodyFor(fx.key);
    const token = await mint('billing', billing.privateKey, body);
    await post(a, body, token).expect(200);
    expectError(await post(b, body, token), 401, 'Unauthorized');
    // sent to both at once: exactly one is served
    const racing = await mint('billing', billing.privateKey, body);
    const statuses = (await Promise.all([post(a, body, racing), post(b, body, racing), post(a, body, racing), post(b, body, racing)])).map((r) => r.status);
    expect(statuses.sort()).toEqual([200, 401, 401, 401]);
  });
});

describe('machine tokens and time (controllable clock)', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let fx: KeyFixture;
  beforeAll(async () => {
    t = await boot({ clock });
    fx = await keyOfNewStore(t);
  });
  afterAll(() => t?.close());

  it('valid for 15 minutes: 14 minutes later → 200, 16 minutes later → 401', async () => {
    const body = bodyFor(fx.key);
    // two tokens made at once: each is good for one request
    const [early, late] = await Promise.all([mint('billing', billing.privateKey, body, clock.now()), mint('billing', billing.privateKey, body, clock.now())]);
    clock.advance(14 * MINUTE_MS);
    await post(t, body, early).expect(200);
    clock.advance(2 * MINUTE_MS);
    expectError(await post(t, body, late), 401, 'Unauthorized');
    // a fresh one works
    await post(t, body, await mint('billing', billing.privateKey, body, clock.now())).expect(200);
  });

  it('a token issued in the future (a clock far ahead) → 401', async () => {
    const body = bodyFor(fx.key);
    const ahead = new Date(clock.now().getTime() + 16 * MINUTE_MS);
    expectError(await post(t, body, await mint('billing', billing.privateKey, body, ahead)), 401, 'Unauthorized');
  });
});

describe('block and allow lists', () => {
  const PRODUCTION = { NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:3000', SUPER_ADMIN_PASSWORD: 'superadmin-change-me', BILLING_PUBLIC_KEY: pem(billing.publicKey) };
  // billing from the environment here
  const services = [
    { name: 'billing', publicKey: { env: 'BILLING_PUBLIC_KEY' } },
    { name: 'reports', publicKey: pem(reports.publicKey) },
  ];
  let blocking: TestApp;
  let allowing: TestApp;
  let staging: TestApp;
  let development: TestApp;
  let fx: KeyFixture;
  beforeAll(async () => {
    // one after another: a failed boot then leaves the earlier ones to afterAll
    blocking = await boot({ env: PRODUCTION, settings: machineSettings({ services, machineToMachineBlockList: ['billing'] }) });
    allowing = await boot({ env: PRODUCTION, settings: machineSettings({ services, allowedM2MClients: ['reports'] }) });
    staging = await boot({ env: { ...PRODUCTION, NODE_ENV: 'staging' }, settings: machineSettings({ services, machineToMachineBlockList: ['billing'] }) });
    development = await boot({ env: { ...PRODUCTION, NODE_ENV: 'development' }, settings: machineSettings({ services, machineToMachineBlockList: ['billing'], allowedM2MClients: ['reports'] }) });
    fx = await keyOfNewStore(development);
  });
  afterAll(async () => {
    await Promise.all([blocking?.close(), allowing?.close(), staging?.close(), development?.close()]);
  });

  async function call(t: TestApp, service: string, privateKey: KeyObject) {
    const body = bodyFor(fx.key);
    return post(t, body, await mint(service, privateKey, body));
  }

  it('production, billing on the block list → 403 MachineClientNotAllowed; reports → 200', async () => {
    expect(blocking.config.env.NODE_ENV).toBe('production');
    expectError(await call(blocking, 'billing', billing.privateKey), 403, 'MachineClientNotAllowed');
    expect((await call(blocking, 'reports', reports.privateKey)).status).toBe(200);
  });

  it('production, only reports allowed → billing 403, reports 200', async () => {
    expectError(await call(allowing, 'billing', billing.privateKey), 403, 'MachineClientNotAllowed');
    expect((await call(allowing, 'reports', reports.privateKey)).status).toBe(200);
  });

  it('staging enforces the block list too', async () => {
    expectError(await call(staging, 'billing', billing.privateKey), 403, 'MachineClientNotAllowed');
    expect((await call(staging, 'reports', reports.privateKey)).status).toBe(200);
  });

  it('each refusal is in the audit log of the store called, with the service and why: blocked, not_allowed', async () => {
    const refusals = async (t: TestApp) => {
      await t.app.get(AuditRecorderService).flush();
      return t.app.get(DataSource).query(`SELECT "outcome", "reason", "actorType", "actorId" FROM "audit_log" WHERE "action" = 'machine.token.refused' AND "reason" IN ('blocked', 'not_allowed')`);
    };
    expectError(await call(blocking, 'billing', billing.privateKey), 403, 'MachineClientNotAllowed');
    expectError(await call(allowing, 'billing', billing.privateKey), 403, 'MachineClientNotAllowed');
    expect(await refusals(blocking)).toContainEqual({ outcome: 'failure', reason: 'blocked', actorType: 'machine', actorId: 'billing' });
    expect(await refusals(allowing)).toContainEqual({ outcome: 'failure', reason: 'not_allowed', actorType: 'machine', actorId: 'billing' });
  });

  it('a blocked service\'s bad token is still a 401, not a 403', async () => {
    expectError(await call(blocking, 'billing', impostor.privateKey), 401, 'Unauthorized');
  });

  it('development, with the same lists → billing 200', async () => {
    const res = await call(development, 'billing', billing.privateKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'OK', session: { userId: fx.store.ownerId } });
  });
});

describe('machine-token settings are checked at boot', () => {

  async function refused(services: Array<{ name: string; publicKey: string | { env: string } }>, named: RegExp): Promise<void> {
    const sockets = openSockets();
    await expect(startApp({ settings: machineSettings({ services }) })).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(named) });
    // the refused app released its database pool and Redis connections
    await expectSocketsReleased(sockets);
  }

  it('a public key that is not Ed25519 (RSA) → ConfigError naming the service', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await refused([{ name: 'legacy', publicKey: pem(rsa.publicKey) }], /machineTokens\.services: legacy: .*not Ed25519/);
  });

  it('a public key that is not a key, or an unset variable → ConfigError naming the service', async () => {
    await refused([{ name: 'broken', publicKey: 'not a pem' }], /machineTokens\.services: broken:/);
    await refused([{ name: 'unset', publicKey: { env: 'UNSET_PUBLIC_KEY_FOR_TEST' } }], /machineTokens\.services: unset: the public key is not set/);
  });
});
