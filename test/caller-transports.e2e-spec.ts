import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { io } from 'socket.io-client';
import { mintMachineToken } from '../src/identity/m2m/machine-token.js';
import { connectSocket, listen, openSse } from './event-clients.js';
import { login, PASSWORD, registerStore, startApp, updateStoreRow, waitFor, type RegisteredStore, type TestApp } from './helpers.js';

// Who is calling, for which store, answered the same over the three transports: each credential
// sent to an HTTP route, in a Socket.IO handshake and to an SSE stream gets the same refusal (or
// none). The HTTP route takes logins and API keys, as the event channel does.

const HEADER = 'svc-store-codename';
const USERS = '/auth-api/v1/users';
const STREAM = '/events/live-sse/stream?topics=storeCreated';
const V = '/auth-api/verification-services/email-2factor-verification';
const machineKey = generateKeyPairSync('ed25519');

// A credential as a client holds it: a bearer value (access token or API key) and the store it
// names, if any.
interface Presented {
  bearer?: string;
  store?: string;
  headers?: Record<string, string>;
}

// `admitted`, or the refusal's errCode (with its HTTP status where there is one).
type Answer = 'admitted' | { status?: number; errCode: string };

async function overHttp(t: TestApp, p: Presented): Promise<Answer> {
  const req = t.http.get(USERS).set(p.headers ?? {});
  if (p.bearer) req.set('Authorization', `Bearer ${p.bearer}`);
  if (p.store) req.set(HEADER, p.store);
  const res = await req;
  return res.status === 200 ? 'admitted' : { status: res.status, errCode: res.body.errCode };
}

async function overSocket(base: string, p: Presented): Promise<Answer> {
  const auth = { ...(p.bearer && { token: `Bearer ${p.bearer}` }), ...(p.store && { tenantCodename: p.store }) };
  const socket = io(`${base}/events/live`, { auth, extraHeaders: p.headers, transports: ['websocket'], reconnection: false, forceNew: true });
  try {
    return await new Promise<Answer>((resolve) => {
      socket.once('connect', () => resolve('admitted'));
      socket.once('connect_error', (error: Error & { data?: { errCode: string } }) => resolve({ errCode: error.data?.errCode ?? error.message }));
    });
  } finally {
    socket.close();
  }
}

async function overSse(base: string, p: Presented): Promise<Answer> {
  const sse = await openSse(base, STREAM, { ...p.headers, ...(p.bearer && { Authorization: `Bearer ${p.bearer}` }), ...(p.store && { [HEADER]: p.store }) });
  try {
    if (sse.status === 200) {
      await sse.next('subscribed');
      return 'admitted';
    }
    await waitFor('the refusal', () => (sse.ended ? true : undefined));
    return { status: sse.status, errCode: JSON.parse(sse.body).errCode };
  } finally {
    sse.close();
  }
}

describe('one caller, three transports', () => {
  let t: TestApp;
  let base: string;
  let store: RegisteredStore;
  let other: RegisteredStore;
  let gone: RegisteredStore;
  const fx = {} as Record<'done' | 'pending' | 'pendingOnceDone' | 'ended' | 'key' | 'otherToken' | 'otherKey' | 'goneToken' | 'goneKey', string>;

  // Email second factor on every sign-in: a login's token is pending until the code is sent back.
  beforeAll(async () => {
    t = await startApp({
      settings: {
        email2FARequiredForLogin: true,
        verification: { verificationMode: 'testMode', flows: { 'email-2factor-verification': { enabled: true } } },
        machineTokens: { services: [{ name: 'billing', publicKey: machineKey.publicKey.export({ type: 'spki', format: 'pem' }) as string }], machineToMachineBlockList: [], allowedM2MClients: [] },
      },
    });
    base = await listen(t);
    [store, other, gone] = [await registerStore(t.http), await registerStore(t.http), await registerStore(t.http)];

    // The sign-in's pending token, and the fresh one completing the factor answers.
    const signIn = async (s: RegisteredStore): Promise<{ pending: string; done: string }> => {
      const pending = (await login(t.http, s.ownerEmail, PASSWORD, s.codename)).accessToken;
      const as = (path: string, body: object) => t.http.post(`${V}/${path}`).set(HEADER, s.codename).set('Authorization', `Bearer ${pending}`).send(body);
      const { secretCode } = (await as('start', {}).expect(200)).body;
      return { pending, done: (await as('complete', { secretCode }).expect(200)).body.accessToken };
    };
    const keyOf = async (s: RegisteredStore, token: string): Promise<string> =>
      (await t.http.post('/auth-api/v1/apikeys').set(HEADER, s.codename).set('Authorization', `Bearer ${token}`).send({ name: 'listener' }).expect(201)).body.apiKey.key;

    const first = await signIn(store);
    fx.done = first.done;
    fx.pendingOnceDone = first.pending;
    fx.key = await keyOf(store, fx.done);
    fx.pending = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    const toEnd = (await signIn(store)).done;
    await t.http.post('/auth-api/logout').set(HEADER, store.codename).set('Authorization', `Bearer ${toEnd}`).expect(200);
    fx.ended = toEnd;
    fx.otherToken = (await signIn(other)).done;
    fx.otherKey = await keyOf(other, fx.otherToken);
    fx.goneToken = (await signIn(gone)).done;
    fx.goneKey = await keyOf(gone, fx.goneToken);
    await updateStoreRow([t], gone.storeId, { isActive: false });
  });
  afterAll(() => t?.close());

  const cases: [string, () => Presented, Answer][] = [
    ['a completed sign-in in its store', () => ({ bearer: fx.done, store: store.codename }), 'admitted'],
    ["an API key, no store named (the key's is the tenant)", () => ({ bearer: fx.key }), 'admitted'],
    ['a sign-in with its email factor pending', () => ({ bearer: fx.pending, store: store.codename }), { status: 403, errCode: 'EmailTwoFactorNeeded' }],
    ["the pending sign-in's token once the factor is done", () => ({ bearer: fx.pendingOnceDone, store: store.codename }), { status: 401, errCode: 'AccessTokenPending' }],
    ['a sign-in whose session has ended', () => ({ bearer: fx.ended, store: store.codename }), { status: 401, errCode: 'Unauthorized' }],
    ['a token that is none', () => ({ bearer: 'not-a-token', store: store.codename }), { status: 401, errCode: 'Unauthorized' }],
    ['a sign-in of a deactivated store', () => ({ bearer: fx.goneToken, store: gone.codename }), { status: 403, errCode: 'StoreInactive' }],
    ['an API key of a deactivated store', () => ({ bearer: fx.goneKey }), { status: 403, errCode: 'StoreInactive' }],
    ['a token of another store', () => ({ bearer: fx.otherToken, store: store.codename }), { status: 403, errCode: 'TenantMismatch' }],
    ["a token of a store, no store named (root's)", () => ({ bearer: fx.otherToken }), { status: 403, errCode: 'TenantMismatch' }],
    ['an API key of another store', () => ({ bearer: fx.otherKey, store: store.codename }), { status: 403, errCode: 'TenantMismatch' }],
    ['a store that does not exist', () => ({ bearer: fx.done, store: 'no-such-store-here' }), { status: 400, errCode: 'StoreNotFound' }],
  ];

  it.each(cases)('%s', async (_name, presented, expected) => {
    const p = presented();
    const answers = { http: await overHttp(t, p), socket: await overSocket(base, p), sse: await overSse(base, p) };
    // The socket's refusal has no HTTP status: its errCode is the same.
    const socket = expected === 'admitted' ? expected : { errCode: expected.errCode };
    expect(answers).toEqual({ http: expected, socket, sse: expected });
  });

  // A machine token signs one HTTP request and is taken only by the routes that say so: neither
  // the route here nor the event channel does. The route then has no credential (401); the
  // channel has an anonymous subscriber, who gets public topics only.
  it('a machine token is no credential where the route or the channel takes none', async () => {
    const token = await mintMachineToken({ service: 'billing', privateKey: machineKey.privateKey, method: 'GET', path: USERS, body: '' });
    const headers = { 'svc-machine-token': token };
    expect(await overHttp(t, { headers })).toEqual({ status: 401, errCode: 'Unauthorized' });
    const socket = await connectSocket(base, 'live', {}, { headers });
    try {
      socket.socket.emit('subscribe', { topics: ['storeCreated', 'userCreated'] });
      expect(await socket.next('subscribed')).toEqual({ topics: ['storeCreated'], rejected: [{ topic: 'userCreated', reason: 'LoginRequired' }] });
    } finally {
      socket.close();
    }
    const sse = await openSse(base, '/events/live-sse/stream?topics=storeCreated,userCreated', headers);
    try {
      expect(await sse.next('subscribed')).toEqual({ topics: ['storeCreated'], rejected: [{ topic: 'userCreated', reason: 'LoginRequired' }] });
    } finally {
      sse.close();
    }
  });
});
