import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { collectLog, expectError, registerStore, startApp, unique, uniqueEmail, type TestApp } from './helpers.js';
import { followRedirects, startDiscoveryPeer, startOidcProvider, startPrefixRelay, type DiscoveryPeer, type OidcPeer, type Relay } from './oauth-peers.js';

// Single sign-on against oidc-provider on loopback: discovery, authorization code with PKCE,
// then the service's own session.
const FRONTEND = 'http://127.0.0.1:9/app';
const CALLBACK = `${FRONTEND}/auth/callback`;

// nestjs-pino builds one root logger per process, with the stream and level of the first
// application started: every application of this file gets this sink at info level, so the
// lines land here whichever starts first. A test reads the lines its requests added.
const log = collectLog();
const logged = log.logged;
const linesSince = log.since;

async function listen(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
}

describe('single sign-on', () => {
  let t: TestApp;
  let base: string;
  let oidc: OidcPeer;

  beforeAll(async () => {
    oidc = await startOidcProvider();
    t = await startApp({
      ...logged,
      env: { FRONTEND_URL: FRONTEND, SSO_SECRET: 'sso-secret', LOG_LEVEL: 'info' },
      settings: {
        sso: {
          ssoName: 'corp',
          tokenPeriodInMinutes: 60,
          emailPropertyInProfile: 'email',
          userNamePropertyInProfile: 'name',
          ssoUserIdPropertyInProfile: 'employee_id',
          tokenHost: oidc.issuer,
          clientId: 'sso-client',
          clientSecret: { env: 'SSO_SECRET' },
        },
      },
    });
    base = await listen(t);
    oidc.serve([{ client_id: 'sso-client', client_secret: 'sso-secret', redirect_uris: [`${base}/auth-api/sso/callback`] }]);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await oidc?.close();
  });

  const signIn = (codename: string) => followRedirects(`${base}/auth-api/sso/login?_store=${codename}`, FRONTEND);
  const result = (codename: string, socialCode: string) => t.http.post('/auth-api/auth/social-login-result').set('svc-store-codename', codename).send({ socialCode });

  it('discovers the provider, signs in with PKCE, and issues its own session with SSOUserId and ssoTime', async () => {
    const store = await registerStore(t.http);
    const sub = unique('emp');
    const email = uniqueEmail();
    oidc.accounts[sub] = { email, email_verified: true, name: 'Edsger Dijkstra', employee_id: `E-${sub}` };
    oidc.nextAccount = sub;

    const start = await t.http.get('/auth-api/sso/login').set('svc-store-codename', store.codename).expect(302);
    const authorize = new URL(start.headers.location);
    expect(authorize.origin).toBe(oidc.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('nonce')).toBeTruthy();

    const landed = await signIn(store.codename);
    expect(landed.origin + landed.pathname).toBe(CALLBACK);
    // ssoName is what the client sees as the provider.
    expect(landed.searchParams.get('provider')).toBe('corp');
    const needed = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
    expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'corp', email, emailVerified: true, fullname: 'Edsger Dijkstra' } });
    const user = await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.codename).send({ socialCode: needed.body.socialCode }).expect(201);

    const again = await signIn(store.codename);
    const session = await result(store.codename, again.searchParams.get('socialCode')!).expect(200);
    expect(session.body).toMatchObject({ userId: user.body.user.id, email, SSOUserId: `E-${sub}`, tenantId: store.storeId });
    expect(typeof session.body.ssoTime).toBe('number');
    const auth = { Authorization: `Bearer ${session.body.accessToken}`, 'svc-store-codename': store.codename };
    const me = await t.http.get('/auth-api/currentuser').set(auth).expect(200);
    expect(me.body.SSOUserId).toBe(`E-${sub}`);
    // tokenPeriodInMinutes, not the native token period.
    const sessions = await t.http.get('/auth-api/sessions').set(auth).expect(200);
    const current = sessions.body.sessions.find((s: { current: boolean }) => s.current);
    const lifetime = new Date(current.expiresAt).getTime() - new Date(current.createdAt).getTime();
    expect(lifetime).toBe(60 * 60_000);
  });

  it('refuses a forged state and a redirect address other than the configured one', async () => {
    const forged = await followRedirects(`${base}/auth-api/sso/callback?code=x&state=forged`, FRONTEND);
    expect(Object.fromEntries(forged.searchParams)).toEqual({ provider: 'corp', error: 'state_mismatch' });
    expectError(await t.http.get(`/auth-api/sso/login?redirectUrl=${encodeURIComponent('https://evil.example/auth/callback')}`), 400, 'SocialRedirectNotAllowed');
  });

  it('a replayed provider callback is refused', async () => {
    const store = await registerStore(t.http);
    oidc.accounts[(oidc.nextAccount = unique('emp'))] = { email: uniqueEmail(), email_verified: true };
    const callback = await followRedirects(`${base}/auth-api/sso/login?_store=${store.codename}`, `${base}/auth-api/sso/callback`);
    expect((await followRedirects(callback.toString(), FRONTEND)).searchParams.get('socialCode')).toBeTruthy();
    expect(Object.fromEntries((await followRedirects(callback.toString(), FRONTEND)).searchParams)).toEqual({ provider: 'corp', error: 'state_mismatch' });
  });

  // The client's callback hears the provider's standard code as it is, never its description.
  describe("the provider's refusals", () => {
    // Where the browser lands when the provider refuses the sign-in, and what was logged at warn.
    async function refused(codename: string, at: (authorize: URL) => void = () => {}) {
      const start = await t.http.get('/auth-api/sso/login').set('svc-store-codename', codename).expect(302);
      const authorize = new URL(start.headers.location);
      at(authorize);
      const from = log.mark();
      const landed = await followRedirects(authorize.toString(), FRONTEND);
      return { landed, query: Object.fromEntries(landed.searchParams), warned: linesSince(from).filter((l) => l.level === 40) };
    }

    it('a standard OAuth code passes through: the person declining (not logged), consent or a provider outage (logged)', async () => {
      const store = await registerStore(t.http);
      oidc.refuseNext = { error: 'access_denied', error_description: 'The user cancelled' };
      expect(await refused(store.codename)).toMatchObject({ query: { provider: 'corp', error: 'access_denied' }, warned: [] });
      for (const error of ['consent_required', 'temporarily_unavailable', 'server_error']) {
        oidc.refuseNext = { error, error_description: `${error} at the provider` };
        const { query, warned } = await refused(store.codename);
        expect(query).toEqual({ provider: 'corp', error });
        expect(warned).toEqual([expect.objectContaining({ provider: 'corp', stage: 'authorization', error, description: `${error} at the provider` })]);
      }
    });

    it("the provider's own OpenID Connect answer to prompt=none without a session: login_required", async () => {
      const store = await registerStore(t.http);
      // The browser has no session at the provider, and asks it not to show a login page.
      const { query } = await refused(store.codename, (authorize) => authorize.searchParams.set('prompt', 'none'));
      expect(query).toEqual({ provider: 'corp', error: 'login_required' });
    });

    it("a code outside the standards is provider_error; the provider's description never reaches the client", async () => {
      const store = await registerStore(t.http);
      const description = 'Account locked: call +1 555 0100 or visit https://evil.example/unlock';
      oidc.refuseNext = { error: 'vendor_account_locked', error_description: description };
      const { landed, query, warned } = await refused(store.codename);
      expect(query).toEqual({ provider: 'corp', error: 'provider_error' });
      expect(decodeURIComponent(landed.toString())).not.toContain('evil.example');
      // The operator reads both.
      expect(warned).toEqual([expect.objectContaining({ stage: 'authorization', error: 'vendor_account_locked', description })]);
      oidc.refuseNext = { error: 'access_denied', error_description: description };
      const declined = await refused(store.codename);
      expect(declined.query).toEqual({ provider: 'corp', error: 'access_denied' });
    });
  });

  it('ssoTime measures the round trip from the login redirect to the callback', async () => {
    const store = await registerStore(t.http);
    const sub = unique('emp');
    oidc.accounts[(oidc.nextAccount = sub)] = { email: uniqueEmail(), email_verified: true, name: 'Barbara Liskov' };
    const callback = await followRedirects(`${base}/auth-api/sso/login?_store=${store.codename}`, `${base}/auth-api/sso/callback`);
    const needed = await result(store.codename, (await followRedirects(callback.toString(), FRONTEND)).searchParams.get('socialCode')!).expect(200);
    await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.codename).send({ socialCode: needed.body.socialCode }).expect(201);

    const again = await followRedirects(`${base}/auth-api/sso/login?_store=${store.codename}`, `${base}/auth-api/sso/callback`);
    // The person lingers at the provider before coming back.
    const lingered = 1500;
    await new Promise((resolve) => setTimeout(resolve, lingered));
    const session = await result(store.codename, (await followRedirects(again.toString(), FRONTEND)).searchParams.get('socialCode')!).expect(200);
    expect(session.body.ssoTime).toBeGreaterThanOrEqual(lingered);
    expect(session.body.ssoTime).toBeLessThan(60_000);
  });
});

describe('single sign-on behind a proxy under a path prefix', () => {
  const SECRET = 'relay-sso-secret-5f1c9a';
  let t: TestApp;
  let relay: Relay;
  let oidc: OidcPeer;
  let publicCallback: string;

  beforeAll(async () => {
    oidc = await startOidcProvider();
    relay = await startPrefixRelay('/identity');
    publicCallback = `${relay.url}/identity/auth-api/sso/callback`;
    t = await startApp({
      ...logged,
      env: { FRONTEND_URL: FRONTEND, SSO_SECRET: SECRET, LOG_LEVEL: 'info' },
      settings: {
        sso: { ssoName: 'corp', tokenPeriodInMinutes: 60, emailPropertyInProfile: 'email', tokenHost: oidc.issuer, redirectUrl: publicCallback, clientId: 'sso-client', clientSecret: { env: 'SSO_SECRET' } },
      },
    });
    relay.target = await listen(t);
    // The public callback is the only address the provider accepts.
    oidc.serve([{ client_id: 'sso-client', client_secret: SECRET, redirect_uris: [publicCallback] }]);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await relay?.close();
    await oidc?.close();
  });

  it('a sign-in through the relay ends with a socialCode: the token request carries the public callback too', async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    oidc.accounts[(oidc.nextAccount = unique('emp'))] = { email, email_verified: true };
    const landed = await followRedirects(`${relay.url}/identity/auth-api/sso/login?_store=${store.codename}`, FRONTEND);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ provider: 'corp', socialCode: expect.any(String) });
    const needed = await t.http.post('/auth-api/auth/social-login-result').set('svc-store-codename', store.codename).send({ socialCode: landed.searchParams.get('socialCode') }).expect(200);
    expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'corp', email } });
  });

  it("a code the provider refuses is logged at warn with the provider's error, never the code or the secret", async () => {
    const store = await registerStore(t.http);
    oidc.accounts[(oidc.nextAccount = unique('emp'))] = { email: uniqueEmail(), email_verified: true };
    const callback = await followRedirects(`${relay.url}/identity/auth-api/sso/login?_store=${store.codename}`, publicCallback);
    const forged = `forged-${unique('code')}`;
    callback.searchParams.set('code', forged);
    const from = log.mark();
    const landed = await followRedirects(callback.toString(), FRONTEND);
    // Our word for the failed exchange; the provider's (invalid_grant) is for the operator.
    expect(Object.fromEntries(landed.searchParams)).toEqual({ provider: 'corp', error: 'token_exchange_failed' });

    expect(linesSince(from).filter((l) => l.level === 40)).toEqual([expect.objectContaining({ provider: 'corp', stage: 'token', error: 'invalid_grant' })]);
    for (const line of log.rawSince(from)) {
      expect(line).not.toContain(forged);
      expect(line).not.toContain(SECRET);
    }
  });
});

describe('an unusable single sign-on provider', () => {
  let t: TestApp;
  let replica: TestApp;
  let peer: DiscoveryPeer;

  beforeAll(async () => {
    peer = await startDiscoveryPeer();
    const sso = { ssoName: 'corp', tokenPeriodInMinutes: 5, emailPropertyInProfile: 'email', tokenHost: peer.url, clientId: 'c', clientSecret: { env: 'SSO_SECRET' } };
    const env = { FRONTEND_URL: FRONTEND, SSO_SECRET: 'unused-secret', LOG_LEVEL: 'info' as const };
    t = await startApp({ ...logged, env, settings: { sso } });
    replica = await startApp({ ...logged, env, settings: { sso } });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await replica?.close();
    await peer?.close();
  });

  // What a request added to the log at warn and above, besides its request line (a 5xx one is
  // at error level).
  const warnings = (from: number) => linesSince(from).filter((l) => l.level >= 40 && l.msg !== 'request completed');

  it('a discovery document naming another issuer answers 502 SsoProviderUnavailable, with one warn line', async () => {
    const store = await registerStore(t.http);
    peer.issuer = peer.url.replace('127.0.0.1', 'localhost');
    try {
      const from = log.mark();
      expectError(await t.http.get('/auth-api/sso/login').set('svc-store-codename', store.codename), 502, 'SsoProviderUnavailable');
      const warned = warnings(from);
      // One warning, naming both issuers; no unhandled error and its stack.
      expect(warned).toEqual([expect.objectContaining({ level: 40, provider: 'corp', stage: 'discovery', discoveredIssuer: peer.issuer })]);
    } finally {
      peer.issuer = peer.url;
    }
  });

  it('a callback on a replica whose discovery fails sends the browser back with provider_unavailable, logged', async () => {
    const store = await registerStore(t.http);
    // The first replica discovered the provider while it was sound.
    const start = await t.http.get('/auth-api/sso/login').set('svc-store-codename', store.codename).expect(302);
    const state = new URL(start.headers.location).searchParams.get('state')!;
    peer.issuer = peer.url.replace('127.0.0.1', 'localhost');
    try {
      const from = log.mark();
      const res = await replica.http.get(`/auth-api/sso/callback?code=some-code&state=${state}`).expect(302);
      expect(Object.fromEntries(new URL(res.headers.location).searchParams)).toEqual({ provider: 'corp', error: 'provider_unavailable' });
      const warned = warnings(from);
      // One warning, naming both issuers; no unhandled error and its stack.
      expect(warned).toEqual([expect.objectContaining({ level: 40, provider: 'corp', stage: 'discovery', discoveredIssuer: peer.issuer })]);
    } finally {
      peer.issuer = peer.url;
    }
  });

  it('an unreachable provider answers 502 SsoProviderUnavailable, not 500', async () => {
    const store = await registerStore(replica.http);
    await peer.close();
    const from = log.mark();
    expectError(await replica.http.get('/auth-api/sso/login').set('svc-store-codename', store.codename), 502, 'SsoProviderUnavailable');
    expect(warnings(from)).toEqual([expect.objectContaining({ level: 40, provider: 'corp', stage: 'discovery', cause: expect.stringContaining('ECONNREFUSED') })]);
  });
});

describe('single sign-on settings', () => {
  it('answers 404 when single sign-on is not configured', async () => {
    const t = await startApp();
    try {
      expectError(await t.http.get('/auth-api/sso/login'), 404, 'SsoNotConfigured');
      expectError(await t.http.get('/auth-api/sso/callback?code=x&state=y'), 404, 'SsoNotConfigured');
    } finally {
      await t.close();
    }
  });

  it('a missing client secret stops the boot, named', async () => {
    const sso = { ssoName: 'corp', tokenPeriodInMinutes: 5, emailPropertyInProfile: 'email', tokenHost: 'https://id.example', clientId: 'c', clientSecret: { env: 'NO_SSO_SECRET' } };
    await expect(startApp({ env: { FRONTEND_URL: FRONTEND }, settings: { sso } })).rejects.toThrow(/settings\.sso\.clientSecret: environment variable NO_SSO_SECRET is not set/);
  });
});
