import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Secret, TOTP } from 'otpauth';
import { createClient, isServiceError, memoryStorage, ServiceError, type EventPacket, type ServiceClient, type SessionChange, type TokenStorage } from '@svc/client';
import { PASSWORD, SUPER_ADMIN, unique, uniqueEmail, startApp, waitFor, type TestApp } from '../../../test/helpers.js';

// The client package against the real service, under Node with no browser globals (as in React
// Native): sign-up and sign-in, second factors, passwordless, refresh (ahead of expiry, on a 401,
// single flight, reuse ending the session once), sign-out, a SaaS administrator's other store,
// and live events over Socket.IO and SSE.

let t: TestApp;
let baseUrl: string;

// Counts the calls of each route a client makes, around the platform's fetch.
function countingFetch() {
  const calls: string[] = [];
  const fetcher = ((...[input, init]: Parameters<typeof fetch>) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    calls.push(new URL(url).pathname);
    return fetch(input, init);
  }) as typeof fetch;
  return { calls, fetcher, count: (path: string) => calls.filter((c) => c === path).length };
}

// A session whose access token the service refuses (expired long ago), keeping its refresh token.
async function staleAccessToken(storage: TokenStorage, key = 'svc.session'): Promise<void> {
  const session = JSON.parse((await storage.getItem(key))!) as Record<string, unknown>;
  const [header, , signature] = String(session.accessToken).split('.');
  const payload = Buffer.from(JSON.stringify({ sub: session.userId, exp: 1 })).toString('base64url');
  await storage.setItem(key, JSON.stringify({ ...session, accessToken: `${header}.${payload}.${signature}` }));
}

async function newOwner(): Promise<{ client: ServiceClient; storage: TokenStorage; codename: string; email: string; http: ReturnType<typeof countingFetch> }> {
  const email = uniqueEmail();
  const signUp = createClient({ baseUrl });
  const { store } = await signUp.signUp.owner({ email, password: PASSWORD, fullname: 'Store Owner', store: { name: unique('Store ') } } as never);
  const storage = memoryStorage();
  const http = countingFetch();
  const client = createClient({ baseUrl, store: store.codename, storage, fetch: http.fetcher });
  const result = await client.signIn({ username: email, password: PASSWORD });
  expect(result.status).toBe('signedIn');
  return { client, storage, codename: store.codename, email, http };
}

beforeAll(async () => {
  t = await startApp({
    env: { SERVICE_CODENAME: unique('sdk') },
    settings: {
      accessTokenMinutes: 5,
      refreshReuseGraceSeconds: 0,
      secondaryIdentifierPresence: 'optional',
      verification: {
        verificationMode: 'testMode',
        flows: { 'email-verification': { enabled: true, verificationType: 'byCode' }, 'password-reset-by-email': { enabled: true, verificationType: 'byCode' } },
      },
      passwordlessLogin: { enabled: true, channels: ['email'], verificationType: 'byCode', expireTimeWindow: 300, resendTimeWindow: 60, allowSignUp: false },
    },
  });
  await t.app.listen(0, '127.0.0.1');
  baseUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
});

const subscriptions: { close(): void }[] = [];

afterAll(async () => {
  for (const subscription of subscriptions) subscription.close();
  await t?.close();
});

describe('@svc/client', () => {
  it('runs where there is no DOM: no window, document, localStorage, EventSource or Web Locks', () => {
    const g = globalThis as Record<string, unknown>;
    for (const name of ['window', 'document', 'localStorage', 'sessionStorage', 'EventSource']) expect(g[name]).toBeUndefined();
    expect((g.navigator as { locks?: unknown } | undefined)?.locks).toBeUndefined();
  });

  it('signs up an owner, signs in, and answers the current user from the session it keeps', async () => {
    const { client, storage, codename, email } = await newOwner();
    const user = await client.currentUser();
    expect(user).toMatchObject({ email, roles: ['tenantOwner'] });
    expect(user).not.toHaveProperty('accessToken');
    const session = await client.session();
    expect(session).toMatchObject({ store: codename, email, pendingFactors: [], mfaEnrollmentNeeded: false });
    expect(session?.refreshToken).toEqual(expect.any(String));
    expect(session?.expiresAt).toBeGreaterThan(Date.now());

    // Another instance on the same storage (the app started again) is signed in.
    const again = createClient({ baseUrl, store: codename, storage });
    expect((await again.currentUser())?.email).toBe(email);

    // Typed routes through the same session: the store's users.
    const { data, error } = await client.api.GET('/auth-api/v1/users', {});
    expect(error).toBeUndefined();
    expect(data?.users.map((u) => u.email)).toContain(email);
  });

  it('throws one ServiceError class: the errCode of the catalogue, the status as a number', async () => {
    const client = createClient({ baseUrl });
    const error = await client.signIn({ username: uniqueEmail(), password: 'wrong password here' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(isServiceError(error, 'InvalidCredentials')).toBe(true);
    expect(error).toMatchObject({ status: 401, errCode: 'InvalidCredentials' });
    const unreachable = await createClient({ baseUrl: 'http://127.0.0.1:9' }).signIn({ username: 'a@example.com', password: 'x' }).catch((e: unknown) => e);
    expect(unreachable).toMatchObject({ errCode: 'NetworkError', status: 0 });
  });

  it('refreshes once for concurrent calls refused with 401, and sends each call again once', async () => {
    const { client, storage, http } = await newOwner();
    const before = await client.session();
    await staleAccessToken(storage);
    const fresh = createClient({ baseUrl, store: before!.store, storage, fetch: http.fetcher });
    const users = await Promise.all(Array.from({ length: 8 }, () => fresh.currentUser()));
    expect(users.every((u) => u?.userId === before!.userId)).toBe(true);
    expect(http.count('/auth-api/refresh')).toBe(1);
    // each sent with the stale token, then once again with the new one
    expect(http.count('/auth-api/currentuser')).toBe(16);
    const after = await fresh.session();
    expect(after?.refreshToken).not.toBe(before?.refreshToken);
    expect(after?.sessionId).toBe(before?.sessionId);
  });

  it('refreshes before the access token expires, without a refused call', async () => {
    const { client, storage, http } = await newOwner();
    const session = JSON.parse((await storage.getItem('svc.session'))!) as { expiresAt: number; store: string };
    await storage.setItem('svc.session', JSON.stringify({ ...session, expiresAt: Date.now() + 5_000 }));
    const again = createClient({ baseUrl, store: session.store, storage, fetch: http.fetcher });
    const before = http.calls.length;
    await Promise.all([again.currentUser(), again.currentUser(), again.sessions.list()]);
    expect(http.calls.slice(before).filter((c) => c === '/auth-api/refresh')).toHaveLength(1);
    expect((await again.session())!.expiresAt).toBeGreaterThan(Date.now() + 60_000);
    void client;
  });

  it('refreshes once across tabs that share the storage (Web Locks), the other tab adopting the result', async () => {
    const { storage, codename, http } = await newOwner();
    await staleAccessToken(storage);
    // Two tabs: two clients on one storage, with the origin's lock manager.
    let queue = Promise.resolve();
    const locks = {
      request<T>(_name: string, work: () => Promise<T>): Promise<T> {
        const run = queue.then(work);
        queue = run.then(
          () => undefined,
          () => undefined,
        );
        return run;
      },
    };
    const g = globalThis as { navigator?: unknown };
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Object.defineProperty(globalThis, 'navigator', { value: { locks }, configurable: true, writable: true });
    try {
      const tabs = [createClient({ baseUrl, store: codename, storage, fetch: http.fetcher }), createClient({ baseUrl, store: codename, storage, fetch: http.fetcher })];
      const changes: SessionChange[] = [];
      tabs[1]!.onSessionChange((_s, change) => changes.push(change));
      const before = http.count('/auth-api/refresh');
      const users = await Promise.all(tabs.flatMap((tab) => [tab.currentUser(), tab.currentUser()]));
      expect(users.every((u) => u !== null)).toBe(true);
      expect(http.count('/auth-api/refresh') - before).toBe(1);
      expect((await tabs[0]!.session())?.refreshToken).toBe((await tabs[1]!.session())?.refreshToken);
      expect(changes.length).toBeGreaterThan(0);
    } finally {
      if (saved) Object.defineProperty(globalThis, 'navigator', saved);
      else delete g.navigator;
    }
  });

  it('ends the session here, with one event, when its refresh token was reused; no loop', async () => {
    const { client, storage, codename, http } = await newOwner();
    const session = await client.session();
    // Someone else spent the refresh token (a copy of the storage): the client's one is now reused.
    const stolen = await fetch(`${baseUrl}/auth-api/refresh`, { method: 'POST', headers: { 'content-type': 'application/json', 'svc-store-codename': codename }, body: JSON.stringify({ refreshToken: session!.refreshToken }) });
    expect(stolen.status).toBe(200);
    await staleAccessToken(storage);
    const victim = createClient({ baseUrl, store: codename, storage, fetch: http.fetcher });
    const changes: SessionChange[] = [];
    victim.onSessionChange((s, change) => changes.push(change));
    const before = http.count('/auth-api/refresh');
    const answers = await Promise.all([victim.currentUser(), victim.currentUser(), victim.sessions.list().catch((e: unknown) => e)]);
    expect(answers[0]).toBeNull();
    expect(answers[1]).toBeNull();
    expect(answers[2]).toMatchObject({ status: 401 });
    expect(http.count('/auth-api/refresh') - before).toBe(1);
    expect(changes).toEqual(['ended']);
    expect(await victim.session()).toBeUndefined();
    expect(await storage.getItem('svc.session')).toBeNull();
    expect(await victim.currentUser()).toBeNull();
    expect(http.count('/auth-api/refresh') - before).toBe(1);
  });

  it('in cookie mode keeps no token in script: the cookies carry the calls and the refresh', async () => {
    // A browser's cookie jar for the service's origin (Node's fetch keeps none).
    const jar = new Map<string, string>();
    const browserFetch = (async (...[input, init]: Parameters<typeof fetch>) => {
      const request = new Request(input, init);
      if (jar.size) request.headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
      const res = await fetch(request);
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, value] = pair!.split('=') as [string, string];
        if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
        else jar.set(name, value);
      }
      return res;
    }) as typeof fetch;
    const { codename, email } = await newOwner();
    const storage = memoryStorage();
    const client = createClient({ baseUrl, store: codename, storage, cookies: true, fetch: browserFetch });
    expect((await client.signIn({ username: email, password: PASSWORD })).status).toBe('signedIn');
    const kept = await storage.getItem('svc.session');
    expect(kept).not.toMatch(/accessToken|refreshToken/);
    expect([...jar.keys()].sort()).toEqual([`svc-access-token-${codename}`, `svc-refresh-token-${codename}`]);
    expect((await client.currentUser())?.email).toBe(email);

    const before = jar.get(`svc-refresh-token-${codename}`);
    expect((await client.refresh())?.userId).toEqual(expect.any(String));
    expect(jar.get(`svc-refresh-token-${codename}`)).not.toBe(before);
    expect((await client.currentUser())?.email).toBe(email);

    await client.signOut();
    expect(await client.currentUser()).toBeNull();
  });

  it('completes a pending sign-in with an authenticator-app code, then with a recovery code', async () => {
    const { client, codename, email } = await newOwner();
    const setup = await client.call<{ secret: string }>('POST', '/auth-api/mfa/totp/setup', {});
    const secret = Secret.fromBase32(setup.secret);
    const now = Date.now();
    const confirm = await client.call<{ recoveryCodes: string[] }>('POST', '/auth-api/mfa/totp/confirm', { code: TOTP.generate({ secret, timestamp: now }) });
    await client.signOut();

    const phone = createClient({ baseUrl, store: codename });
    const pending = await phone.signIn({ username: email, password: PASSWORD });
    expect(pending).toMatchObject({ status: 'secondFactor', factors: ['totp', 'recoveryCode'] });
    await expect(phone.sessions.list()).rejects.toMatchObject({ errCode: 'TotpTwoFactorNeeded' });
    // The next step's code (an app a little ahead): the one just used is spent.
    const done = await phone.secondFactor.totp(TOTP.generate({ secret, timestamp: now + 30_000 }));
    expect(done.status).toBe('signedIn');
    expect((await phone.sessions.list()).sessions.length).toBeGreaterThan(0);

    const laptop = createClient({ baseUrl, store: codename });
    expect((await laptop.signIn({ username: email, password: PASSWORD })).status).toBe('secondFactor');
    expect((await laptop.secondFactor.recoveryCode(confirm.recoveryCodes[0]!)).status).toBe('signedIn');
    expect((await laptop.currentUser())?.email).toBe(email);
  });

  it('signs in without a password (passwordless code)', async () => {
    const { client, codename, email } = await newOwner();
    await client.signOut();
    const other = createClient({ baseUrl, store: codename });
    const started = await other.passwordless.start({ email });
    expect(started.secretCode).toMatch(/^\d{6}$/);
    const result = await other.passwordless.complete({ email, secretCode: started.secretCode! });
    expect(result.status).toBe('signedIn');
    expect((await other.currentUser())?.email).toBe(email);
  });

  it('verifies the email address and resets a forgotten password with codes', async () => {
    const { client, codename, email } = await newOwner();
    const started = await client.verification.start('email', { email });
    expect(started.secretCode).toMatch(/^\d+$/);
    expect(await client.verification.complete('email', { email, secretCode: started.secretCode! })).toMatchObject({ isVerified: true });
    expect((await client.api.GET('/auth-api/currentuser', {})).data).toBeDefined();

    const forgetful = createClient({ baseUrl, store: codename });
    const reset = await forgetful.passwordReset.start({ email });
    await forgetful.passwordReset.complete({ email, secretCode: reset.secretCode!, password: 'a brand new passphrase 42' });
    expect((await forgetful.signIn({ username: email, password: 'a brand new passphrase 42' })).status).toBe('signedIn');
    await expect(forgetful.signIn({ username: email, password: PASSWORD })).rejects.toMatchObject({ errCode: 'InvalidCredentials' });
  });

  it('signs out at the service: the token dies there, the session here, with one event', async () => {
    const { client, storage } = await newOwner();
    const token = (await client.session())!.accessToken!;
    const changes: SessionChange[] = [];
    client.onSessionChange((_s, change) => changes.push(change));
    await client.signOut();
    expect(changes).toEqual(['signedOut']);
    expect(await storage.getItem('svc.session')).toBeNull();
    expect(await client.currentUser()).toBeNull();
    const res = await fetch(`${baseUrl}/auth-api/currentuser`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(401);
  });

  it("lets a SaaS administrator call another store's routes with withStore", async () => {
    const { codename, email } = await newOwner();
    const admin = createClient({ baseUrl });
    expect((await admin.signIn(SUPER_ADMIN)).status).toBe('signedIn');
    const users = await admin.withStore(codename).call<{ users: { email: string }[] }>('GET', '/auth-api/v1/users');
    expect(users.users.map((u) => u.email)).toContain(email);
    // Its own routes still go to its own store.
    expect((await admin.withStore(codename).currentUser())?.email).toBe(SUPER_ADMIN.username);
  });

  it.each(['websocket', 'sse'] as const)('renews a token about to expire before it (re)connects over %s', async (transport) => {
    const { storage, codename, http } = await newOwner();
    await staleAccessToken(storage);
    const client = createClient({ baseUrl, store: codename, storage, fetch: http.fetcher });
    const session = (await client.session())!;
    await storage.setItem('svc.session', JSON.stringify({ ...session, expiresAt: Date.now() - 1000 }));
    const reopened = createClient({ baseUrl, store: codename, storage, fetch: http.fetcher });
    const before = http.count('/auth-api/refresh');
    const answer = await new Promise<{ topics: string[]; rejected: string[] }>((resolve, reject) => {
      subscriptions.push(
        reopened.events.subscribe(transport === 'sse' ? 'live-sse' : 'live', { transport, topics: ['userCreated'], onEvent: () => {}, onSubscribed: resolve, onError: (e) => reject(new Error(e.errCode)) }),
      );
    });
    // userCreated is for signed-in users of the store: accepted only with a valid token.
    expect(answer).toEqual({ topics: ['userCreated'], rejected: [] });
    expect(http.count('/auth-api/refresh') - before).toBe(1);
  });

  it.each(['websocket', 'sse'] as const)('delivers live events over %s with typed packets', async (transport) => {
    const { client, codename } = await newOwner();
    const received: EventPacket<'userCreated'>[] = [];
    const subscribed = new Promise<{ topics: string[] }>((resolve) => {
      const subscription = client.events.subscribe(transport === 'sse' ? 'live-sse' : 'live', {
        transport,
        topics: ['userCreated'],
        onEvent: (event) => received.push(event),
        onSubscribed: resolve,
      });
      subscriptions.push(subscription);
    });
    expect((await subscribed).topics).toEqual(['userCreated']);
    const email = uniqueEmail();
    await createClient({ baseUrl, store: codename }).signUp.user({ email, password: PASSWORD, fullname: 'Live User' } as never);
    const event = await waitFor('the userCreated event', () => received.find((e) => (e.data as { email?: string }).email === email));
    expect(event).toMatchObject({ topic: 'userCreated', data: { email } });
  });
});
