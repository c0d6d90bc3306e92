import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { ManualClock } from '../src/platform/clock/clock.js';
import { collectLog, expectError, PASSWORD, registerStore, startApp, unique, uniqueEmail, type TestApp, updateStoreRow } from './helpers.js';
import { followRedirects, startOAuthServer, startOidcProvider, startPrefixRelay, type OAuthPeer, type OidcPeer, type Relay } from './oauth-peers.js';

// Full redirect flows against real providers on loopback: oidc-provider stands in for Google
// (an OpenID provider) and for single sign-on, oauth2-mock-server for GitLab.
const FRONTEND = 'http://127.0.0.1:9/app';
const CALLBACK = `${FRONTEND}/auth/callback`;

// Apple signs its client secret with an ES256 key of the developer account.
const APPLE_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

// nestjs-pino builds one root logger per process, with the stream and level of the first
// application started: every application of this file gets this sink at info level, so the
// lines land here whichever starts first. A test reads the lines its requests added.
const log = collectLog();
const logged = log.logged;
const LOG_LEVEL = 'info';

async function listenOn(app: TestApp): Promise<string> {
  await app.app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(app.app.getHttpServer().address() as AddressInfo).port}`;
}

const at = (peer: OAuthPeer) => ({ authorizationUrl: `${peer.url}/authorize`, tokenUrl: `${peer.url}/token`, profileUrl: `${peer.url}/userinfo` });

describe('social login', () => {
  let t: TestApp;
  let base: string;
  let oidc: OidcPeer;
  let gitlab: OAuthPeer;
  const clock = new ManualClock();

  beforeAll(async () => {
    gitlab = await startOAuthServer();
    // The provider must know the service's address, and the service the provider's: reserve the
    // provider first, start the service, then register its redirect addresses.
    oidc = await startOidcProvider();
    t = await startApp({
      ...logged,
      clock,
      env: { FRONTEND_URL: FRONTEND, GOOGLE_SECRET: 'google-secret', GITLAB_SECRET: 'gitlab-secret', APPLE_KEY: APPLE_KEY, LOG_LEVEL },
      settings: {
        socialLogin: {
          providers: {
            google: { enabled: true, clientId: 'google-client', clientSecret: { env: 'GOOGLE_SECRET' }, authorizationUrl: `${oidc.issuer}/auth`, tokenUrl: `${oidc.issuer}/token`, profileUrl: `${oidc.issuer}/me` },
            gitlab: { enabled: true, clientId: 'gitlab-client', clientSecret: { env: 'GITLAB_SECRET' }, ...at(gitlab) },
            facebook: { enabled: true, clientId: 'facebook-client', clientSecret: { env: 'GITLAB_SECRET' }, ...at(gitlab) },
            microsoft: { enabled: true, clientId: 'microsoft-client', clientSecret: { env: 'GITLAB_SECRET' }, ...at(gitlab) },
            linkedin: { enabled: true, clientId: 'linkedin-client', clientSecret: { env: 'GITLAB_SECRET' }, ...at(gitlab) },
            apple: { enabled: true, clientId: 'apple-client', teamId: 'TEAM123', keyId: 'KEY123', privateKey: { env: 'APPLE_KEY' }, ...at(gitlab) },
            // Without `user:email` the strategy does not ask GitHub which addresses are verified.
            github: { enabled: true, clientId: 'github-client', clientSecret: { env: 'GITLAB_SECRET' }, scopes: ['read:user'], ...at(gitlab) },
          },
        },
      },
    });
    base = await listenOn(t);
    oidc.serve([{ client_id: 'google-client', client_secret: 'google-secret', redirect_uris: [`${base}/auth-api/auth/google/callback`] }]);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await oidc?.close();
    await gitlab?.close();
  });

  // Signs in at the provider for `codename` and returns the client's callback address.
  const signIn = (provider: string, codename: string) => followRedirects(`${base}/auth-api/auth/${provider}?_store=${codename}`, FRONTEND);
  const result = (codename: string, socialCode: string) => t.http.post('/auth-api/auth/social-login-result').set('svc-store-codename', codename).send({ socialCode });

  it('a new Google user registers with the socialCode and no password, then signs in with Google', async () => {
    const store = await registerStore(t.http);
    const sub = unique('g');
    oidc.accounts[sub] = { email: `${sub}@gmail.example`, email_verified: true, name: 'Grace Hopper' };
    oidc.nextAccount = sub;

    const landed = await signIn('google', store.codename);
    expect(landed.origin + landed.pathname).toBe(CALLBACK);
    expect(landed.searchParams.get('provider')).toBe('google');
    const first = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
    expect(first.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'google', email: `${sub}@gmail.example`, emailVerified: true, fullname: 'Grace Hopper' } });

    const registered = await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.codename).send({ socialCode: first.body.socialCode }).expect(201);
    expect(registered.body.user).toMatchObject({ email: `${sub}@gmail.example`, fullname: 'Grace Hopper', emailVerified: true });
    expect(registered.body.user).not.toHaveProperty('password');

    const again = await signIn('google', store.codename);
    const session = await result(store.codename, again.searchParams.get('socialCode')!).expect(200);
    expect(session.body).toMatchObject({ userId: registered.body.user.id, email: `${sub}@gmail.example`, tenantId: store.storeId });
    expect(session.headers['set-cookie']?.[0]).toContain(`svc-access-token-${store.codename}=`);
    const me = await t.http.get('/auth-api/currentuser').set('svc-store-codename', store.codename).set('Authorization', `Bearer ${session.body.accessToken}`).expect(200);
    expect(me.body.userId).toBe(registered.body.user.id);
  });

  it('a socialCode works once and for 180 seconds only', async () => {
    const store = await registerStore(t.http);
    oidc.accounts[(oidc.nextAccount = unique('g'))] = { email: uniqueEmail(), email_verified: true, name: 'Once Only' };
    const code = (await signIn('google', store.codename)).searchParams.get('socialCode')!;
    await result(store.codename, code).expect(200);
    expectError(await result(store.codename, code), 400, 'SocialCodeInvalid');

    const late = (await signIn('google', store.codename)).searchParams.get('socialCode')!;
    clock.advance(181_000);
    expectError(await result(store.codename, late), 400, 'SocialCodeInvalid');
  });

  it('refuses a forged state and a replayed callback, sending the browser back with an error', async () => {
    const store = await registerStore(t.http);
    const forged = await followRedirects(`${base}/auth-api/auth/google/callback?code=abc&state=forged`, FRONTEND);
    expect(Object.fromEntries(forged.searchParams)).toEqual({ provider: 'google', error: 'state_mismatch' });

    // Stop at the service's own callback to replay it.
    oidc.accounts[(oidc.nextAccount = unique('g'))] = { email: uniqueEmail(), email_verified: true };
    const callback = await followRedirects(`${base}/auth-api/auth/google?_store=${store.codename}`, `${base}/auth-api/auth/google/callback`);
    const first = await followRedirects(callback.toString(), FRONTEND);
    expect(first.searchParams.get('socialCode')).toBeTruthy();
    const replay = await followRedirects(callback.toString(), FRONTEND);
    expect(Object.fromEntries(replay.searchParams)).toEqual({ provider: 'google', error: 'state_mismatch' });
  });

  it('a flow started on one replica finishes on another, and its socialCode is redeemed on a third', async () => {
    const store = await registerStore(t.http);
    // The replicas share one clock: an earlier test moved it past the codes' lifetime.
    const replica = await startApp({ ...logged, clock, env: { FRONTEND_URL: FRONTEND, GOOGLE_SECRET: 'google-secret', GITLAB_SECRET: 'gitlab-secret', APPLE_KEY, LOG_LEVEL }, settings: { socialLogin: t.config.settings.socialLogin } });
    try {
      const other = await listenOn(replica);
      gitlab.profile = { id: unique('id'), username: 'rep', name: 'Rep Lica', email: uniqueEmail() };
      const callback = await followRedirects(`${base}/auth-api/auth/gitlab?_store=${store.codename}`, `${base}/auth-api/auth/gitlab/callback`);
      // The provider's redirect address is the first replica's; the load balancer sends it elsewhere.
      const landed = await followRedirects(`${other}${callback.pathname}${callback.search}`, FRONTEND);
      expect(Object.fromEntries(landed.searchParams)).toMatchObject({ provider: 'gitlab', socialCode: expect.any(String) });
      const res = await t.http.post('/auth-api/auth/social-login-result').set('svc-store-codename', store.codename).send({ socialCode: landed.searchParams.get('socialCode') });
      // Status and body together, so a refusal shows its errCode.
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'gitlab', fullname: 'Rep Lica' } } });
    } finally {
      await replica.close();
    }
  });

  it('redirects only to the configured address, exactly', async () => {
    const ok = await t.http.get(`/auth-api/auth/google?redirectUrl=${encodeURIComponent(CALLBACK)}`).expect(302);
    expect(ok.headers.location).toContain(`${oidc.issuer}/auth?`);
    expect(new URL(ok.headers.location).searchParams.get('code_challenge_method')).toBe('S256');
    for (const tampered of ['https://evil.example/auth/callback', `${CALLBACK}/../../evil`, `${CALLBACK}?x=1`]) {
      expectError(await t.http.get(`/auth-api/auth/google?redirectUrl=${encodeURIComponent(tampered)}`), 400, 'SocialRedirectNotAllowed');
    }
    expectError(await t.http.get('/auth-api/auth/myspace'), 404, 'SocialProviderNotFound');
    expectError(await t.http.get('/auth-api/auth/microsoftt'), 404, 'SocialProviderNotFound');
  });

  // Each provider's strategy reads its own profile shape; an email counts as verified only
  // where the provider says so.
  const shapes: [string, (id: string, email: string) => Record<string, unknown>, boolean][] = [
    ['facebook', (id, email) => ({ id, name: 'Fay Book', email }), false],
    ['microsoft', (id, email) => ({ id, displayName: 'Fay Book', mail: email }), false],
    ['linkedin', (id, email) => ({ sub: id, name: 'Fay Book', email, email_verified: true }), true],
    ['github', (id, email) => ({ id, login: 'faybook', name: 'Fay Book', email }), false],
    ['gitlab', (id, email) => ({ id, username: 'faybook', name: 'Fay Book', email, confirmed_at: '2024-01-01T00:00:00Z' }), true],
  ];
  it.each(shapes)('%s: the full flow brings the profile and links the account', async (provider, shape, verified) => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    gitlab.profile = shape(unique('id'), email);
    const needed = await result(store.codename, (await signIn(provider, store.codename)).searchParams.get('socialCode')!).expect(200);
    expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider, email, emailVerified: verified, fullname: 'Fay Book' } });
    const user = await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.codename).send({ socialCode: needed.body.socialCode }).expect(201);
    expect(user.body.user.emailVerified).toBe(verified);
    const session = await result(store.codename, (await signIn(provider, store.codename)).searchParams.get('socialCode')!).expect(200);
    expect(session.body.userId).toBe(user.body.user.id);
  });

  it("apple: the form post return, the ID token's verified email and the name Apple sends once", async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    gitlab.claims = { sub: unique('apple'), email, email_verified: 'true' };
    try {
      const callback = await followRedirects(`${base}/auth-api/auth/apple?_store=${store.codename}`, `${base}/auth-api/auth/apple/callback`);
      const form = new URLSearchParams({ code: callback.searchParams.get('code')!, state: callback.searchParams.get('state')!, user: JSON.stringify({ name: { firstName: 'Ada', lastName: 'Apple' } }) });
      const res = await fetch(`${base}/auth-api/auth/apple/callback`, { method: 'POST', body: form, redirect: 'manual' });
      expect(res.status).toBe(302);
      const landed = new URL(res.headers.get('location')!);
      const needed = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
      expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'apple', email, emailVerified: true, fullname: 'Ada Apple' } });
    } finally {
      gitlab.claims = {};
    }
  });

  it('a return without a code ends the flow with an error instead of starting a new one', async () => {
    const store = await registerStore(t.http);
    const callback = await followRedirects(`${base}/auth-api/auth/apple?_store=${store.codename}`, `${base}/auth-api/auth/apple/callback`);
    const form = new URLSearchParams({ state: callback.searchParams.get('state')!, error: 'user_cancelled_authorize' });
    const res = await fetch(`${base}/auth-api/auth/apple/callback`, { method: 'POST', body: form, redirect: 'manual' });
    expect(Object.fromEntries(new URL(res.headers.get('location')!).searchParams)).toEqual({ provider: 'apple', error: 'access_denied' });
    // Anywhere else a form body is still refused.
    expectError(await t.http.post('/auth-api/login').type('form').send('username=a&password=b'), 415, 'UnsupportedMediaType');
  });

  it('an unverified provider email never takes over the account that has it', async () => {
    const store = await registerStore(t.http);
    const victim = store.ownerEmail;
    gitlab.profile = { id: 4242, username: 'mallory', name: 'Mallory', email: victim };
    const landed = await signIn('gitlab', store.codename);
    const res = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
    expect(res.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'gitlab', email: victim, emailVerified: false } });
    expect(res.body).not.toHaveProperty('accessToken');
    expectError(
      await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.codename).send({ socialCode: res.body.socialCode }),
      409,
      'DuplicateIdentifier',
    );
  });

  it("store A's social identity never signs in to store B", async () => {
    const a = await registerStore(t.http);
    const b = await registerStore(t.http);
    gitlab.profile = { id: Number(Date.now() % 1e9), username: 'ann', name: 'Ann', email: uniqueEmail(), confirmed_at: '2024-01-01T00:00:00Z' };
    const first = await result(a.codename, (await signIn('gitlab', a.codename)).searchParams.get('socialCode')!).expect(200);
    await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', a.codename).send({ socialCode: first.body.socialCode, password: PASSWORD }).expect(201);
    const inA = await result(a.codename, (await signIn('gitlab', a.codename)).searchParams.get('socialCode')!).expect(200);
    expect(inA.body.tenantId).toBe(a.storeId);

    // A code from store A's flow is nothing in store B.
    const codeA = (await signIn('gitlab', a.codename)).searchParams.get('socialCode')!;
    expectError(await result(b.codename, codeA), 400, 'SocialCodeInvalid');
    // The same provider account starting in store B is a stranger there.
    const inB = await result(b.codename, (await signIn('gitlab', b.codename)).searchParams.get('socialCode')!).expect(200);
    expect(inB.body.type).toBe('RegisterNeededForSocialLogin');
  });

  it('registers a store owner with a socialCode', async () => {
    oidc.accounts[(oidc.nextAccount = unique('g'))] = { email: uniqueEmail(), email_verified: true, name: 'Owner Social' };
    const code = (await signIn('google', 'root')).searchParams.get('socialCode')!;
    const needed = await result('root', code).expect(200);
    const res = await t.http.post('/auth-api/v1/registerstoreowner').send({ socialCode: needed.body.socialCode, store: { name: unique('Social ') } }).expect(201);
    expect(res.body.user).toMatchObject({ fullname: 'Owner Social', emailVerified: true, roleId: 'tenantOwner' });
    // Linked in the new store, where the owner lives.
    const codename = res.body.store.codename as string;
    const session = await result(codename, (await signIn('google', codename)).searchParams.get('socialCode')!).expect(200);
    expect(session.body.userId).toBe(res.body.user.id);
  });

  it('a registration without password or socialCode is still refused', async () => {
    const store = await registerStore(t.http);
    const res = await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.codename).send({ email: uniqueEmail(), fullname: 'No Password' });
    expect(res.status).toBe(400);
  });
});

describe('social login passes the gates of a password login', () => {
  let t: TestApp;
  let base: string;
  let gitlab: OAuthPeer;

  beforeAll(async () => {
    gitlab = await startOAuthServer();
    t = await startApp({
      ...logged,
      env: { FRONTEND_URL: FRONTEND, GITLAB_SECRET: 'gitlab-secret', LOG_LEVEL },
      settings: {
        emailVerificationRequiredForLogin: true,
        email2FARequiredForLogin: true,
        maxSessionsPerUser: 2,
        verification: { verificationMode: 'testMode', flows: { 'email-verification': { enabled: true }, 'email-2factor-verification': { enabled: true } } },
        socialLogin: { providers: { gitlab: { enabled: true, clientId: 'gitlab-client', clientSecret: { env: 'GITLAB_SECRET' }, ...at(gitlab) } } },
      },
    });
    base = await listenOn(t);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await gitlab?.close();
  });

  const HEADER = 'svc-store-codename';
  const socialLogin = async (codename: string) => {
    const landed = await followRedirects(`${base}/auth-api/auth/gitlab?_store=${codename}`, FRONTEND);
    return t.http.post('/auth-api/auth/social-login-result').set(HEADER, codename).send({ socialCode: landed.searchParams.get('socialCode') });
  };
  const loggedIn = async (codename: string) => {
    const res = await socialLogin(codename);
    expect({ status: res.status, accessToken: typeof res.body.accessToken }).toEqual({ status: 200, accessToken: 'string' });
    return res;
  };
  // A user registered through GitLab; `verified`: GitLab confirmed the email.
  async function registerThroughGitlab(codename: string, verified: boolean) {
    gitlab.profile = { id: unique('id'), username: 'gate', name: 'Gate Keeper', email: uniqueEmail(), ...(verified && { confirmed_at: '2024-01-01T00:00:00Z' }) };
    const needed = await socialLogin(codename);
    expect(needed.body.type).toBe('RegisterNeededForSocialLogin');
    return t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, codename).send({ socialCode: needed.body.socialCode }).expect(201);
  }

  it('registration with a socialCode names the verification still needed, and login waits for it', async () => {
    const store = await registerStore(t.http);
    const unverified = await registerThroughGitlab(store.codename, false);
    expect(unverified.body).toMatchObject({ emailVerificationNeeded: true, user: { emailVerified: false } });
    const refused = await socialLogin(store.codename);
    expectError(refused, 403, 'EmailVerificationNeeded');
    expect(refused.body).not.toHaveProperty('accessToken');

    const verified = await registerThroughGitlab(store.codename, true);
    expect(verified.body.user.emailVerified).toBe(true);
    expect(verified.body).not.toHaveProperty('emailVerificationNeeded');
  });

  it('the login owes its email second factor: flagged, and held back from protected routes', async () => {
    const store = await registerStore(t.http);
    await registerThroughGitlab(store.codename, true);
    const session = await loggedIn(store.codename);
    expect(session.body).toMatchObject({ sessionNeedsEmail2FA: true });
    const bearer = `Bearer ${session.body.accessToken}`;
    expectError(await t.http.get('/auth-api/sessions').set(HEADER, store.codename).set('Authorization', bearer), 403, 'EmailTwoFactorNeeded');
    const me = await t.http.get('/auth-api/currentuser').set(HEADER, store.codename).set('Authorization', bearer).expect(200);
    expect(me.body).toMatchObject({ sessionId: session.body.sessionId, sessionNeedsEmail2FA: true });
  });

  it('counts toward the session cap: a third login ends the oldest', async () => {
    const store = await registerStore(t.http);
    await registerThroughGitlab(store.codename, true);
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) tokens.push((await loggedIn(store.codename)).body.accessToken);
    const me = (token: string) => t.http.get('/auth-api/currentuser').set(HEADER, store.codename).set('Authorization', `Bearer ${token}`);
    expect((await me(tokens[0])).status).toBe(401);
    await me(tokens[1]).expect(200);
    await me(tokens[2]).expect(200);
  });

  it('a deactivated user, or a deactivated store, gets no session', async () => {
    const store = await registerStore(t.http);
    const user = await registerThroughGitlab(store.codename, true);
    const ds = t.app.get(DataSource);
    await ds.query('UPDATE "users" SET "isActive" = false WHERE "id" = $1', [user.body.user.id]);
    expectError(await socialLogin(store.codename), 403, 'UserInactive');
    await ds.query('UPDATE "users" SET "isActive" = true WHERE "id" = $1', [user.body.user.id]);
    await updateStoreRow([t], store.storeId, { isActive: false });
    expectError(await socialLogin(store.codename), 403, 'StoreInactive');
  });
});

describe('social login behind a proxy under a path prefix', () => {
  const SECRET = 'relay-google-secret-8d2e41';
  let t: TestApp;
  let relay: Relay;
  let oidc: OidcPeer;
  let publicCallback: string;

  beforeAll(async () => {
    oidc = await startOidcProvider();
    relay = await startPrefixRelay('/identity');
    publicCallback = `${relay.url}/identity/auth-api/auth/google/callback`;
    t = await startApp({
      ...logged,
      // PUBLIC_URL is the public address, prefix included: the callback registered at the provider.
      env: { FRONTEND_URL: FRONTEND, PUBLIC_URL: `${relay.url}/identity`, GOOGLE_SECRET: SECRET, LOG_LEVEL },
      settings: {
        socialLogin: {
          providers: { google: { enabled: true, clientId: 'google-client', clientSecret: { env: 'GOOGLE_SECRET' }, authorizationUrl: `${oidc.issuer}/auth`, tokenUrl: `${oidc.issuer}/token`, profileUrl: `${oidc.issuer}/me` } },
        },
      },
    });
    relay.target = await listenOn(t);
    oidc.serve([{ client_id: 'google-client', client_secret: SECRET, redirect_uris: [publicCallback] }]);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await relay?.close();
    await oidc?.close();
  });

  it('a sign-in through the relay ends with a socialCode: the token request carries the public callback too', async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    oidc.accounts[(oidc.nextAccount = unique('g'))] = { email, email_verified: true, name: 'Behind Proxy' };
    const landed = await followRedirects(`${relay.url}/identity/auth-api/auth/google?_store=${store.codename}`, FRONTEND);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ provider: 'google', socialCode: expect.any(String) });
    const needed = await t.http.post('/auth-api/auth/social-login-result').set('svc-store-codename', store.codename).send({ socialCode: landed.searchParams.get('socialCode') }).expect(200);
    expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'google', email } });
  });

  it("a code the provider refuses is logged at warn with the provider's error, never the code or the secret", async () => {
    const store = await registerStore(t.http);
    oidc.accounts[(oidc.nextAccount = unique('g'))] = { email: uniqueEmail(), email_verified: true };
    const callback = await followRedirects(`${relay.url}/identity/auth-api/auth/google?_store=${store.codename}`, publicCallback);
    const forged = `forged-${unique('code')}`;
    callback.searchParams.set('code', forged);
    const from = log.mark();
    const landed = await followRedirects(callback.toString(), FRONTEND);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ provider: 'google', error: 'provider_error' });

    const written = log.rawSince(from);
    const warned = log.since(from).filter((l) => l.level === 40);
    expect(warned).toEqual([expect.objectContaining({ provider: 'google', stage: 'callback', error: 'invalid_grant' })]);
    for (const line of written) {
      expect(line).not.toContain(forged);
      expect(line).not.toContain(SECRET);
    }
  });

  it("a provider's error in the return is logged at warn; a person declining is not", async () => {
    const store = await registerStore(t.http);
    const returned = async (error: string) => {
      const callback = await followRedirects(`${relay.url}/identity/auth-api/auth/google?_store=${store.codename}`, publicCallback);
      callback.searchParams.delete('code');
      callback.searchParams.set('error', error);
      callback.searchParams.set('error_description', `${error} at the provider`);
      const from = log.mark();
      const landed = await followRedirects(callback.toString(), FRONTEND);
      const warned = log.since(from).filter((l) => l.level === 40);
      return { error: landed.searchParams.get('error'), warned };
    };
    oidc.accounts[(oidc.nextAccount = unique('g'))] = { email: uniqueEmail(), email_verified: true };
    // A standard code reaches the client as it is; its description only the log.
    expect(await returned('temporarily_unavailable')).toEqual({
      error: 'temporarily_unavailable',
      warned: [expect.objectContaining({ provider: 'google', stage: 'authorization', error: 'temporarily_unavailable', description: 'temporarily_unavailable at the provider' })],
    });
    expect(await returned('access_denied')).toEqual({ error: 'access_denied', warned: [] });
    expect(await returned('vendor_account_locked')).toEqual({
      error: 'provider_error',
      warned: [expect.objectContaining({ provider: 'google', stage: 'authorization', error: 'vendor_account_locked' })],
    });
  });
});

describe('social login settings', () => {
  it('an enabled provider without its secret stops the boot, named', async () => {
    await expect(
      startApp({ env: { FRONTEND_URL: FRONTEND }, settings: { socialLogin: { providers: { github: { enabled: true, clientId: 'x', clientSecret: { env: 'MISSING_GITHUB_SECRET' } } } } } }),
    ).rejects.toThrow(/socialLogin\.providers\.github\.clientSecret: environment variable MISSING_GITHUB_SECRET is not set/);
  });

  it('an enabled provider needs somewhere to send the browser back', async () => {
    await expect(startApp({ env: { GH: 's' }, settings: { socialLogin: { providers: { github: { enabled: true, clientId: 'x', clientSecret: { env: 'GH' } } } } } })).rejects.toThrow(
      /redirectUrl or FRONTEND_URL is required/,
    );
  });
});
