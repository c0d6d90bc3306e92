import { createPublicKey, createVerify, type JsonWebKey } from 'node:crypto';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { Secret, TOTP } from 'otpauth';
import { DataSource } from 'typeorm';
import { OidcPayloadSweep } from '../src/identity/oidc-provider/oidc-payload.sweep.js';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { expectError, freePort, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, updateStoreRow, type RegisteredStore, type TestApp } from './helpers.js';

// The OpenID Connect provider (docs/oidc.md) driven by openid-client as the relying party, with
// its HTML sign-in pages submitted as a browser would (manual redirects, cookies kept).

const REDIRECT = 'http://127.0.0.1:4999/callback';
const LOGOUT_REDIRECT = 'http://127.0.0.1:4999/logged-out';

// A browser's cookies, enough for one host: set, replaced and cleared by the answers.
class Browser {
  private readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=/i.test(a) && new Date(a.split('=')[1]!).getTime() < Date.now());
      if (!value || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  post(url: string, form: Record<string, string>): Promise<Response> {
    return this.fetch(url, { method: 'POST', body: new URLSearchParams(form), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }
}

function formAction(html: string, index = 0): string {
  const actions = [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]!.replace(/&#x3D;/g, '=').replace(/&amp;/g, '&'));
  return actions[index]!;
}

function location(res: Response): string {
  const to = res.headers.get('location');
  if (!to) throw new Error(`expected a redirect, got ${res.status}`);
  return new URL(to, res.url).href;
}

// The OAuth error code of a refused request, whether in the body or a WWW-Authenticate challenge.
async function oauthError(pending: Promise<unknown>): Promise<string | undefined> {
  try {
    await pending;
  } catch (error) {
    const e = error as { error?: string; cause?: { parameters?: { error?: string } }[] };
    return e.error ?? e.cause?.[0]?.parameters?.error;
  }
  throw new Error('the request was not refused');
}

interface Client {
  clientId: string;
  clientSecret?: string;
}

describe('OpenID Connect provider', () => {
  let t: TestApp;
  let base: string;
  let store: RegisteredStore;
  let other: RegisteredStore;
  let adminToken: string;
  let userEmail: string;
  let client: Client;
  let config: oidc.Configuration;

  async function createClient(target: RegisteredStore, token: string, body: Record<string, unknown>): Promise<Client> {
    const res = await t.http
      .post('/auth-api/v1/oauthclients')
      .set('svc-store-codename', target.codename)
      .set('authorization', `Bearer ${token}`)
      .send({ name: 'Orders web', redirectUris: [REDIRECT], postLogoutRedirectUris: [LOGOUT_REDIRECT], ...body });
    expect(res.status).toBe(201);
    return res.body.oauthClient;
  }

  function issuerOf(target: RegisteredStore): string {
    return `${base}/auth-api/oidc/${target.codename}`;
  }

  async function discover(target: RegisteredStore, c: Client, auth?: oidc.ClientAuth): Promise<oidc.Configuration> {
    return oidc.discovery(new URL(issuerOf(target)), c.clientId, undefined, auth ?? oidc.ClientSecretBasic(c.clientSecret!), { execute: [oidc.allowInsecureRequests] });
  }

  // The authorization request through the sign-in pages; the answer's redirect to the client.
  async function signIn(browser: Browser, cfg: oidc.Configuration, params: Record<string, string>, username = userEmail, password = PASSWORD, totp?: () => string): Promise<{ callback: string; pages: string[] }> {
    const pages: string[] = [];
    let res = await browser.fetch(oidc.buildAuthorizationUrl(cfg, { redirect_uri: REDIRECT, ...params }).href);
    for (let hops = 0; hops < 12; hops++) {
      if (res.status === 303 || res.status === 302) {
        const to = location(res);
        if (to.startsWith(REDIRECT)) return { callback: to, pages };
        res = await browser.fetch(to);
        continue;
      }
      const html = await res.text();
      pages.push(html);
      if (res.status >= 500) throw new Error(`page ${res.status}: ${html}`);
      if (html.includes('name="password"')) res = await browser.post(formAction(html), { username, password });
      else if (html.includes('name="code"') && totp) {
        // `recovery:<code>`: the page's second form, a recovery code.
        const answer = totp();
        res = answer.startsWith('recovery:') ? await browser.post(formAction(html, 1), { recoveryCode: answer.slice('recovery:'.length) }) : await browser.post(formAction(html), { code: answer });
      }
      else if (html.includes('Allow access')) res = await browser.post(formAction(html), {});
      else throw new Error(`unexpected page: ${html}`);
    }
    throw new Error('too many redirects');
  }

  async function codeFlow(browser: Browser, cfg: oidc.Configuration, scope = 'openid email profile roles offline_access') {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const { callback, pages } = await signIn(browser, cfg, { scope, state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', prompt: 'consent' });
    const tokens = await oidc.authorizationCodeGrant(cfg, new URL(callback), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
    return { tokens, callback, pages, verifier };
  }

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({ env: { PUBLIC_URL: base, SERVICE_CODENAME: unique('op') } });
    await new Promise<void>((resolve) => (t.app.getHttpServer() as Server).listen(port, '127.0.0.1', resolve));
    store = await registerStore(t.http);
    other = await registerStore(t.http);
    adminToken = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    userEmail = uniqueEmail();
    await t.http.post('/auth-api/users').set('svc-store-codename', store.codename).set('authorization', `Bearer ${adminToken}`).send({ email: userEmail, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
    client = await createClient(store, adminToken, { grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], tokenEndpointAuthMethod: 'client_secret_basic', scopes: ['openid', 'offline_access', 'email', 'profile', 'roles', 'phone'], firstParty: false });
    config = await discover(store, client);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it('publishes a discovery document whose issuer and keys are the service\'s', async () => {
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(issuerOf(store));
    expect(meta.authorization_endpoint).toBe(`${issuerOf(store)}/auth`);
    expect(meta.token_endpoint).toBe(`${issuerOf(store)}/token`);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(['openid', 'offline_access', 'email', 'phone', 'profile', 'roles']));
    const provider = (await (await fetch(meta.jwks_uri!)).json()) as { keys: { kid: string; n: string; d?: string }[] };
    const service = (await (await fetch(`${base}/auth-api/.well-known/jwks.json`)).json()) as { keys: { kid: string; n: string }[] };
    // The service's keys (on a database shared with other deployments, less any another secret
    // sealed), its current signing key first.
    const serviceKeys = service.keys.map((k) => [k.kid, k.n]);
    for (const key of provider.keys) expect(serviceKeys).toContainEqual([key.kid, key.n]);
    const { kid } = JSON.parse(Buffer.from(adminToken.split('.')[0]!, 'base64url').toString()) as { kid: string };
    expect(provider.keys[0]?.kid).toBe(kid);
    expect(provider.keys.every((k) => k.d === undefined)).toBe(true);
    // A Host header names nothing: the addresses are the issuer's.
    const spoofed = await fetch(`${issuerOf(store)}/.well-known/openid-configuration`, { headers: { 'x-forwarded-host': 'evil.example' } });
    expect(((await spoofed.json()) as { token_endpoint: string }).token_endpoint).toBe(`${issuerOf(store)}/token`);
  });

  it('signs in with code and PKCE through the pages: an ID token verified by the client, userinfo by scope, refresh rotated', async () => {
    const browser = new Browser();
    const { tokens, callback, pages } = await codeFlow(browser, config);
    expect(new URL(callback).searchParams.get('iss')).toBe(issuerOf(store));
    expect(pages.some((p) => p.includes('read your email address'))).toBe(true);
    const claims = tokens.claims()!;
    expect(claims.iss).toBe(issuerOf(store));
    expect(claims.aud).toBe(client.clientId);
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.acr).toBe('aal1');
    // Signed by a key of the service's own JWKS.
    const [header] = tokens.id_token!.split('.');
    const { kid } = JSON.parse(Buffer.from(header!, 'base64url').toString()) as { kid: string };
    const jwks = (await (await fetch(`${base}/auth-api/.well-known/jwks.json`)).json()) as { keys: (JsonWebKey & { kid: string })[] };
    const jwk = jwks.keys.find((k) => k.kid === kid)!;
    const [h, p, s] = tokens.id_token!.split('.');
    expect(createVerify('RSA-SHA256').update(`${h}.${p}`).verify(createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(s!, 'base64url'))).toBe(true);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, email: userEmail, email_verified: false, name: 'Ada Lovelace', store: store.codename, roles: ['tenantUser'] });
    expect(info.phone_number).toBeUndefined();

    expect(tokens.refresh_token).toBeTruthy();
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    // The spent one is refused (and revokes the grant: the new one with it).
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe('invalid_grant');
  });

  it('releases only the claims of the scopes asked', async () => {
    const { tokens } = await codeFlow(new Browser(), config, 'openid');
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    expect(Object.keys(info)).toEqual(['sub']);
    expect(tokens.refresh_token).toBeUndefined();
  });

  it("does not ask a first-party application's users for consent; a third-party one's once, then remembers it", async () => {
    const flow = async (cfg: oidc.Configuration, browser: Browser) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const { callback, pages } = await signIn(browser, cfg, { scope: 'openid email', nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const tokens = await oidc.authorizationCodeGrant(cfg, new URL(callback), { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
      const info = await oidc.fetchUserInfo(cfg, tokens.access_token, tokens.claims()!.sub);
      return { asked: pages.some((p) => p.includes('Allow access')), email: info.email };
    };
    const own = await createClient(store, adminToken, { grantTypes: ['authorization_code'], scopes: ['openid', 'email'], firstParty: true });
    expect(await flow(await discover(store, own), new Browser())).toEqual({ asked: false, email: userEmail });

    const partner = await createClient(store, adminToken, { grantTypes: ['authorization_code'], scopes: ['openid', 'email'], firstParty: false });
    const browser = new Browser();
    const partnerConfig = await discover(store, partner);
    expect(await flow(partnerConfig, browser)).toEqual({ asked: true, email: userEmail });
    // consentRemembered (default): the same user and application are not asked again.
    expect(await flow(partnerConfig, browser)).toEqual({ asked: false, email: userEmail });
  });

  it('signs the user in to applications again without a form while the service session lives, and not once it has ended', async () => {
    const browser = new Browser();
    const { tokens } = await codeFlow(browser, config, 'openid');
    const sub = tokens.claims()!.sub;
    const silent = async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      const res = await browser.fetch(oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'none', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }).href);
      let to = location(res);
      // The provider answers through its resume step.
      for (let hops = 0; hops < 5 && !to.startsWith(REDIRECT); hops++) to = location(await browser.fetch(to));
      return new URL(to).searchParams;
    };
    expect((await silent()).get('code')).toBeTruthy();

    // An administrator ends the user's sessions at the service.
    await t.http.delete(`/auth-api/v1/users/${sub}/sessions`).set('svc-store-codename', store.codename).set('authorization', `Bearer ${adminToken}`).expect(200);
    const refused = await silent();
    expect(refused.get('code')).toBeNull();
    expect(refused.get('error')).toBe('login_required');
  });

  it('introspects and revokes tokens; client credentials', async () => {
    const { tokens } = await codeFlow(new Browser(), config, 'openid email');
    const live = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(live).toMatchObject({ active: true, client_id: client.clientId, sub: tokens.claims()!.sub });
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);

    const machine = await oidc.clientCredentialsGrant(config);
    expect(machine.access_token).toBeTruthy();
    expect(await oidc.tokenIntrospection(config, machine.access_token)).toMatchObject({ active: true, client_id: client.clientId });
  });

  it('authenticates a client by its secret only: a wrong one, or the stored hash sent as the secret, is refused', async () => {
    const wrong = await discover(store, client, oidc.ClientSecretBasic('not-the-secret'));
    expect(await oauthError(oidc.clientCredentialsGrant(wrong))).toBe('invalid_client');
    const { createHash } = await import('node:crypto');
    const hashed = await discover(store, client, oidc.ClientSecretBasic(createHash('sha256').update(client.clientSecret!).digest('hex')));
    expect(await oauthError(oidc.clientCredentialsGrant(hashed))).toBe('invalid_client');
    // The same secret in the form body.
    const post = await discover(store, client, oidc.ClientSecretPost(client.clientSecret!));
    expect((await oidc.clientCredentialsGrant(post)).access_token).toBeTruthy();
  });

  it('ends the provider session and the service session at end_session', async () => {
    const browser = new Browser();
    const { tokens } = await codeFlow(browser, config, 'openid');
    const sessions = await t.http.get(`/auth-api/v1/users/${tokens.claims()!.sub}/sessions`).set('svc-store-codename', store.codename).set('authorization', `Bearer ${adminToken}`).expect(200);
    const count = (body: { sessions: unknown[] }) => body.sessions.length;
    const before = count(sessions.body);
    expect(before).toBeGreaterThan(0);

    const endUrl = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGOUT_REDIRECT, state: 'bye' });
    const confirm = await browser.fetch(endUrl.href);
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;
    const action = /<form[^>]*action="([^"]+)"/.exec(html)![1]!;
    const done = await browser.post(new URL(action, issuerOf(store)).href, { xsrf, logout: 'yes' });
    expect(location(done)).toBe(`${LOGOUT_REDIRECT}?state=bye`);

    const after = await t.http.get(`/auth-api/v1/users/${tokens.claims()!.sub}/sessions`).set('svc-store-codename', store.codename).set('authorization', `Bearer ${adminToken}`).expect(200);
    expect(count(after.body)).toBe(before - 1);
    // The provider session is over: the next authorization asks for the password again.
    const again = await signIn(browser, config, { scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', nonce: oidc.randomNonce() });
    expect(again.pages.some((p) => p.includes('name="password"'))).toBe(true);
  });

  it('asks for the authenticator app\'s code after the password when the account has one', async () => {
    const email = uniqueEmail();
    await t.http.post('/auth-api/users').set('svc-store-codename', store.codename).set('authorization', `Bearer ${adminToken}`).send({ email, password: PASSWORD, fullname: 'Grace Hopper' }).expect(201);
    const own = await login(t.http, email, PASSWORD, store.codename);
    const api = (path: string) => t.http.post(`/auth-api/mfa/totp/${path}`).set('svc-store-codename', store.codename).set('authorization', `Bearer ${own.accessToken}`);
    const secret = (await api('setup').expect(200)).body.secret as string;
    const code = (steps: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + steps * 30_000 });
    await api('confirm').send({ code: code(0) }).expect(200);
    // A wrong code first: the code form again; then the next step's code (the current one is spent).
    const codes = ['000000' === code(1) ? '111111' : '000000', code(1)];
    const verifier = oidc.randomPKCECodeVerifier();
    const { callback, pages } = await signIn(new Browser(), config, { scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', prompt: 'consent' }, email, PASSWORD, () => codes.shift()!);
    expect(pages.some((p) => p.includes('Wrong code. Try again.'))).toBe(true);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: 'aal2' });
  });

  it('takes a recovery code instead of the app\'s code, each one once', async () => {
    const email = uniqueEmail();
    await t.http.post('/auth-api/users').set('svc-store-codename', store.codename).set('authorization', `Bearer ${adminToken}`).send({ email, password: PASSWORD, fullname: 'Ada Recovery' }).expect(201);
    const own = await login(t.http, email, PASSWORD, store.codename);
    const api = (path: string) => t.http.post(`/auth-api/mfa/totp/${path}`).set('svc-store-codename', store.codename).set('authorization', `Bearer ${own.accessToken}`);
    const secret = (await api('setup').expect(200)).body.secret as string;
    const confirmed = await api('confirm').send({ code: TOTP.generate({ secret: Secret.fromBase32(secret) }) }).expect(200);
    const recovery = confirmed.body.recoveryCodes[0] as string;
    const flow = async (answers: string[]) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const next = () => {
        const answer = answers.shift()!;
        if (answer === 'asked again') throw new Error(answer);
        return answer;
      };
      return signIn(new Browser(), config, { scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', prompt: 'consent' }, email, PASSWORD, next).then(async ({ callback }) => {
        const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, idTokenExpected: true });
        return tokens.claims()!.sub;
      });
    };
    expect(await flow([`recovery:${recovery}`])).toBe(own.userId);
    // Spent: the code form comes back instead of the application.
    await expect(flow([`recovery:${recovery}`, 'asked again'])).rejects.toThrow('asked again');
  });

  it('shows the form again on a wrong password, in the same words as for an unknown account', async () => {
    const browser = new Browser();
    let res = await browser.fetch(oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' }).href);
    res = await browser.fetch(location(res));
    const action = formAction(await res.text());
    const wrong = await browser.post(action, { username: userEmail, password: 'wrong password' });
    const unknown = await browser.post(action, { username: uniqueEmail(), password: 'wrong password' });
    const [a, b] = [await wrong.text(), await unknown.text()];
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(a).toContain('Wrong username or password.');
    expect(a.replace(/value="[^"]*"/g, '')).toBe(b.replace(/value="[^"]*"/g, ''));
  });

  it('refuses an unregistered redirect URI, a missing PKCE challenge and a reused code', async () => {
    const browser = new Browser();
    const bad = await browser.fetch(oidc.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:4999/elsewhere', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }).href);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('location')).toBeNull();
    expect(await bad.text()).toContain('redirect_uri');

    const noPkce = await browser.fetch(oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid' }).href);
    expect(noPkce.status).toBe(303);
    const errorBack = new URL(location(noPkce));
    expect(errorBack.origin + errorBack.pathname).toBe(REDIRECT);
    expect(errorBack.searchParams.get('error')).toBe('invalid_request');

    const verifier = oidc.randomPKCECodeVerifier();
    const { callback } = await signIn(browser, config, { scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', prompt: 'consent' });
    const first = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, idTokenExpected: true });
    expect((await oidc.tokenIntrospection(config, first.access_token)).active).toBe(true);
    expect(await oauthError(oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier }))).toBe('invalid_grant');
    // The code's second use revokes what its first use issued.
    expect((await oidc.tokenIntrospection(config, first.access_token)).active).toBe(false);
  });

  it('knows a store\'s clients, tokens and sessions at that store\'s issuer only', async () => {
    const otherAdmin = (await login(t.http, other.ownerEmail, PASSWORD, other.codename)).accessToken;
    const foreign = await createClient(other, otherAdmin, { grantTypes: ['authorization_code', 'client_credentials'], tokenEndpointAuthMethod: 'client_secret_basic', scopes: ['openid'] });
    // The other store's client at this store's issuer: unknown.
    const here = await discover(store, foreign);
    expect(await oauthError(oidc.clientCredentialsGrant(here))).toBe('invalid_client');
    const authorize = await fetch(oidc.buildAuthorizationUrl(here, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }).href, { redirect: 'manual' });
    expect(authorize.status).toBe(400);
    // This store's token is not active at the other store's issuer.
    const machine = await oidc.clientCredentialsGrant(config);
    const there = await discover(other, foreign);
    expect((await oidc.tokenIntrospection(there, machine.access_token)).active).toBe(false);
    // A store's own users only: this store's user cannot sign in at the other store's issuer.
    const browser = new Browser();
    let res = await browser.fetch(oidc.buildAuthorizationUrl(there, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' }).href);
    res = await browser.fetch(location(res));
    const refused = await browser.post(formAction(await res.text()), { username: userEmail, password: PASSWORD });
    expect(refused.status).toBe(401);
  });

  it('answers 404 for a store that does not exist', async () => {
    const res = await fetch(`${base}/auth-api/oidc/no-such-store-here/.well-known/openid-configuration`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ result: 'ERR', status: 404, errCode: 'StoreNotFound' });
  });

  // A user of the store (created by its admin), its id.
  async function newUser(target: RegisteredStore, token: string): Promise<{ id: string; email: string }> {
    const email = uniqueEmail();
    const res = await t.http.post('/auth-api/users').set('svc-store-codename', target.codename).set('authorization', `Bearer ${token}`).send({ email, password: PASSWORD, fullname: 'Alan Turing' }).expect(201);
    return { id: res.body.user.id, email };
  }

  // The sign-in's password form submitted once; the page answered.
  async function submitPassword(cfg: oidc.Configuration, username: string): Promise<Response> {
    const browser = new Browser();
    let res = await browser.fetch(oidc.buildAuthorizationUrl(cfg, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' }).href);
    res = await browser.fetch(location(res));
    return browser.post(formAction(await res.text()), { username, password: PASSWORD });
  }

  // A sign-in of `email` through the consent page, in a browser of its own; its tokens.
  async function codeFlowAs(email: string, scope = 'openid email offline_access') {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const { callback } = await signIn(new Browser(), config, { scope, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', prompt: 'consent' }, email);
    return oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
  }

  async function pkce(extra: Record<string, string> = {}) {
    return { scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', ...extra };
  }

  it('refuses a deactivated user: no sign-in, and its refresh token stops working', async () => {
    const user = await newUser(store, adminToken);
    const own = await codeFlowAs(user.email);
    expect(own.refresh_token).toBeTruthy();
    await t.http.patch(`/auth-api/v1/users/${user.id}`).set('svc-store-codename', store.codename).set('authorization', `Bearer ${adminToken}`).send({ isActive: false }).expect(200);

    expect(await oauthError(oidc.refreshTokenGrant(config, own.refresh_token!))).toBe('invalid_grant');
    const refused = await submitPassword(config, user.email);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('This account cannot sign in here.');
  });

  it("refuses everything at a deactivated store's issuer", async () => {
    const gone = await registerStore(t.http);
    const goneAdmin = (await login(t.http, gone.ownerEmail, PASSWORD, gone.codename)).accessToken;
    const goneClient = await createClient(gone, goneAdmin, { grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], scopes: ['openid', 'offline_access'] });
    const goneConfig = await discover(gone, goneClient);
    const verifier = oidc.randomPKCECodeVerifier();
    const { callback } = await signIn(new Browser(), goneConfig, { scope: 'openid offline_access', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', prompt: 'consent' }, gone.ownerEmail);
    const tokens = await oidc.authorizationCodeGrant(goneConfig, new URL(callback), { pkceCodeVerifier: verifier, idTokenExpected: true });

    await updateStoreRow([t], gone.storeId, { isActive: false });
    const discovery = await fetch(`${issuerOf(gone)}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(403);
    expect(await discovery.json()).toMatchObject({ result: 'ERR', status: 403, errCode: 'StoreInactive' });
    const authorize = await fetch(oidc.buildAuthorizationUrl(goneConfig, { redirect_uri: REDIRECT, ...(await pkce()) }).href, { redirect: 'manual' });
    expect(authorize.status).toBe(403);
    await expect(oidc.refreshTokenGrant(goneConfig, tokens.refresh_token!)).rejects.toThrow();
    await expect(oidc.clientCredentialsGrant(goneConfig)).rejects.toThrow();
    await expect(oidc.fetchUserInfo(goneConfig, tokens.access_token, tokens.claims()!.sub)).rejects.toThrow();
  });

  it('asks for the password again with prompt=login or max_age=0, even with a provider session', async () => {
    const browser = new Browser();
    await codeFlow(browser, config, 'openid');
    // The provider session signs the user in without the form...
    const quiet = await signIn(browser, config, await pkce());
    expect(quiet.pages.some((p) => p.includes('name="password"'))).toBe(false);
    // ...unless the application asks for a new sign-in.
    const again = await signIn(browser, config, await pkce({ prompt: 'login' }));
    expect(again.pages.some((p) => p.includes('name="password"'))).toBe(true);
    expect(new URL(again.callback).searchParams.get('code')).toBeTruthy();
    const aged = await signIn(browser, config, await pkce({ max_age: '0' }));
    expect(aged.pages.some((p) => p.includes('name="password"'))).toBe(true);
    expect(new URL(aged.callback).searchParams.get('code')).toBeTruthy();
  });

  it("lists and revokes a user's consents, its own and by an administrator: the refresh token under one dies; audited", async () => {
    const user = await newUser(store, adminToken);
    const own = await login(t.http, user.email, PASSWORD, store.codename);
    const as = (method: 'get' | 'delete', path: string, token = own.accessToken) => t.http[method](path).set('svc-store-codename', store.codename).set('authorization', `Bearer ${token}`);
    const first = await codeFlowAs(user.email);
    const second = await codeFlowAs(user.email);

    const listed = await as('get', '/auth-api/oauth/consents?pageRowCount=1').expect(200);
    expect(listed.body).toMatchObject({ status: 'OK', dataName: 'consents', paging: { pageNumber: 1, pageRowCount: 1, totalRowCount: 2, pageCount: 2 } });
    expect(listed.body.consents).toEqual([{ id: expect.any(String), clientId: client.clientId, clientName: 'Orders web', scopes: expect.arrayContaining(['openid', 'email', 'offline_access']), createdAt: expect.any(String) }]);
    const all = (await as('get', '/auth-api/oauth/consents').expect(200)).body.consents as { id: string }[];
    expect(all).toHaveLength(2);
    // Another user sees none of them, and cannot revoke them.
    const stranger = await login(t.http, userEmail, PASSWORD, store.codename);
    expect(((await as('get', '/auth-api/oauth/consents', stranger.accessToken).expect(200)).body.consents as { id: string }[]).map((c) => c.id)).not.toContain(all[0]!.id);
    expectError(await as('delete', `/auth-api/oauth/consents/${all[0]!.id}`, stranger.accessToken), 404, 'OAuthConsentNotFound');

    // Which consent holds which refresh token: revoke one, the other refresh still works.
    await as('delete', `/auth-api/oauth/consents/${all[0]!.id}`).expect(200);
    expectError(await as('delete', `/auth-api/oauth/consents/${all[0]!.id}`), 404, 'OAuthConsentNotFound');
    const results = await Promise.all([first, second].map((tokens) => oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!)).catch(() => 'ok')));
    expect(results.sort()).toEqual(['invalid_grant', 'ok']);

    // An administrator lists and revokes the other.
    const byAdmin = await as('get', `/auth-api/v1/users/${user.id}/oauthconsents`, adminToken).expect(200);
    expect(byAdmin.body.consents.map((c: { id: string }) => c.id)).toEqual([all[1]!.id]);
    await as('delete', `/auth-api/v1/users/${user.id}/oauthconsents/${all[1]!.id}`, adminToken).expect(200);
    expect((await as('get', '/auth-api/oauth/consents').expect(200)).body.consents).toEqual([]);
    // A plain user cannot use the administrators' routes.
    expect((await as('get', `/auth-api/v1/users/${user.id}/oauthconsents`).send()).status).toBe(403);

    await t.app.get(AuditRecorderService).flush();
    const audit = async (action: string) => (await as('get', `/auth-api/v1/auditlogs?pageRowCount=100&action=${action}`, adminToken).expect(200)).body.auditLogs as { actor: { id: string }; target: { id: string }; details: Record<string, unknown> }[];
    const granted = (await audit('oauth.consent.granted')).filter((e) => e.actor.id === user.id);
    expect(granted).toHaveLength(2);
    expect(granted[0]!.details).toMatchObject({ clientId: client.clientId, scopes: expect.arrayContaining(['openid', 'offline_access']) });
    const revoked = (await audit('oauth.consent.revoked')).filter((e) => e.details.userId === user.id);
    expect(revoked.map((e) => [e.target.id, e.actor.id]).sort()).toEqual([[all[0]!.id, user.id], [all[1]!.id, store.ownerId]].sort());
  });

  it('sweeps expired rows away and keeps live ones', async () => {
    const db = t.app.get(DataSource);
    const [expired, live] = [unique('expired'), unique('live')];
    const insert = (id: string, expiresAt: Date) =>
      db.query(`INSERT INTO "oidc_payload" ("model", "id", "storeId", "payload", "expiresAt") VALUES ('AccessToken', $1, $2, '{}', $3)`, [id, store.storeId, expiresAt]);
    await insert(expired, new Date(Date.now() - 60_000));
    await insert(live, new Date(Date.now() + 60_000));
    expect(await t.app.get(OidcPayloadSweep).sweep()).toBeGreaterThanOrEqual(1);
    const left = (await db.query(`SELECT "id" FROM "oidc_payload" WHERE "id" = ANY($1)`, [[expired, live]])) as { id: string }[];
    expect(left.map((r) => r.id)).toEqual([live]);
  });
});

describe('OpenID Connect provider turned off', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ settings: { oidcProvider: { enabled: false } } as never });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers 404 OidcProviderDisabled at every store\'s issuer', async () => {
    const res = await t.http.get('/auth-api/oidc/root/.well-known/openid-configuration');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ result: 'ERR', status: 404, errCode: 'OidcProviderDisabled' });
  });
});
