import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { SocialProviderRegistry } from '../src/identity/social/social-provider-registry.js';
import type { SocialProvider } from '../src/identity/social/social-provider.js';
import { collectLog, expectError, freePort, PASSWORD, registerStore, startApp, unique, uniqueEmail, type TestApp } from './helpers.js';
import { followRedirects, startOAuthServer, startOidcProvider, type OAuthPeer, type OidcPeer } from './oauth-peers.js';

// Sign-in providers beyond the built-in ones: a generic OpenID Connect provider configured by
// settings alone (oidc-provider on loopback, discovered), a plain OAuth 2.0 one with its
// endpoints written out (oauth2-mock-server), and one an extension registers in code.
const FRONTEND = 'http://127.0.0.1:9/app';
const CALLBACK = `${FRONTEND}/auth/callback`;
const HEADER = 'svc-store-codename';

// nestjs-pino builds one root logger per process, with the stream and level of the first
// application started: every application of this file gets this sink at info level.
const log = collectLog();
const logged = log.logged;

async function listenOn(app: TestApp): Promise<string> {
  await app.app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(app.app.getHttpServer().address() as AddressInfo).port}`;
}

// An extension's provider, written against the interface file alone: a plain OAuth 2.0 server
// asked with fetch, its flow's state from the service.
function acmeProvider(server: OAuthPeer): SocialProvider {
  return {
    name: 'acme',
    secrets: ['acme-client-secret'],
    async authorizationUrl({ callbackUrl, beginFlow }) {
      const state = await beginFlow();
      const params = new URLSearchParams({ response_type: 'code', client_id: 'acme-client', redirect_uri: callbackUrl, scope: 'profile', state });
      return `${server.url}/authorize?${params}`;
    },
    async profile({ params, callbackUrl }) {
      const form = { grant_type: 'authorization_code', code: String(params.code), redirect_uri: callbackUrl, client_id: 'acme-client', client_secret: 'acme-client-secret' };
      const token = await fetch(`${server.url}/token`, { method: 'POST', body: new URLSearchParams(form) });
      if (!token.ok) throw new Error(`the token endpoint answered ${token.status}`);
      const { access_token } = (await token.json()) as { access_token: string };
      const me = (await (await fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })).json()) as Record<string, string>;
      return { providerUserId: me.login, email: me.email, emailVerified: false, fullname: me.name };
    },
  };
}

// A module of an extension: registers its providers when the application initializes.
function signInExtension(...providers: SocialProvider[]) {
  @Module({})
  class SignInExtensionModule implements OnModuleInit {
    constructor(@Inject(SocialProviderRegistry) private readonly registry: SocialProviderRegistry) {}

    onModuleInit(): void {
      for (const provider of providers) this.registry.register(provider);
    }
  }
  return SignInExtensionModule;
}

describe('sign-in providers configured by settings alone, and registered in code', () => {
  let t: TestApp;
  let base: string;
  let oidc: OidcPeer;
  let intranet: OAuthPeer;
  let acme: OAuthPeer;

  beforeAll(async () => {
    intranet = await startOAuthServer();
    acme = await startOAuthServer();
    oidc = await startOidcProvider();
    t = await startApp({
      ...logged,
      env: { FRONTEND_URL: FRONTEND, CORP_SECRET: 'corp-client-secret', INTRANET_SECRET: 'intranet-client-secret', LOG_LEVEL: 'info' },
      settings: {
        socialLogin: {
          providers: {
            // OpenID Connect, discovered from the issuer; the email comes from another claim.
            corp: { type: 'oidc', enabled: true, issuer: oidc.issuer, clientId: 'corp-client', clientSecret: { env: 'CORP_SECRET' }, claims: { email: 'upn' } },
            // Plain OAuth 2.0 (no `openid` scope): the endpoints written out, the profile from userinfo.
            intranet: {
              type: 'oidc',
              enabled: true,
              issuer: intranet.url,
              authorizationUrl: `${intranet.url}/authorize`,
              tokenUrl: `${intranet.url}/token`,
              profileUrl: `${intranet.url}/userinfo`,
              clientId: 'intranet-client',
              clientSecret: { env: 'INTRANET_SECRET' },
              scopes: ['profile'],
              claims: { subject: 'id', email: 'mail', emailVerified: 'mail_confirmed', name: 'displayName', picture: 'photo.url' },
            },
          },
        },
      },
      imports: [signInExtension(acmeProvider(acme))],
    });
    base = await listenOn(t);
    oidc.serve([{ client_id: 'corp-client', client_secret: 'corp-client-secret', redirect_uris: [`${base}/auth-api/auth/corp/callback`] }]);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await oidc?.close();
    await intranet?.close();
    await acme?.close();
  });

  const signIn = (provider: string, codename: string) => followRedirects(`${base}/auth-api/auth/${provider}?_store=${codename}`, FRONTEND);
  const result = (codename: string, socialCode: string) => t.http.post('/auth-api/auth/social-login-result').set(HEADER, codename).send({ socialCode });
  const register = (codename: string, socialCode: string) => t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, codename).send({ socialCode });

  it('a generic OpenID Connect provider: discovery, PKCE and a nonce, the claims the settings name, then the account signs in', async () => {
    const store = await registerStore(t.http);
    const sub = unique('corp');
    const upn = `${sub}@corp.example`;
    // No `email` claim and no `name`: the email is the `upn` claim, the name given + family.
    oidc.accounts[(oidc.nextAccount = sub)] = { upn, email_verified: true, given_name: 'Grace', family_name: 'Hopper', picture: 'https://img.example/grace.png' };

    const start = await t.http.get('/auth-api/auth/corp').set(HEADER, store.codename).expect(302);
    const authorize = new URL(start.headers.location);
    expect(authorize.origin).toBe(oidc.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ client_id: 'corp-client', code_challenge_method: 'S256', nonce: expect.any(String), scope: 'openid email profile' });

    const landed = await signIn('corp', store.codename);
    expect(landed.origin + landed.pathname).toBe(CALLBACK);
    expect(landed.searchParams.get('provider')).toBe('corp');
    const needed = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
    expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'corp', email: upn, emailVerified: true, fullname: 'Grace Hopper', avatar: 'https://img.example/grace.png' } });
    const user = await register(store.codename, needed.body.socialCode).expect(201);
    expect(user.body.user).toMatchObject({ email: upn, fullname: 'Grace Hopper', emailVerified: true });

    const session = await result(store.codename, (await signIn('corp', store.codename)).searchParams.get('socialCode')!).expect(200);
    expect(session.body).toMatchObject({ userId: user.body.user.id, email: upn, tenantId: store.storeId });
    await t.http.get('/auth-api/currentuser').set(HEADER, store.codename).set('Authorization', `Bearer ${session.body.accessToken}`).expect(200);
  });

  it('a generic plain OAuth 2.0 provider: the profile from its userinfo answer, read by the settings’ claim names (nested too)', async () => {
    const store = await registerStore(t.http);
    const email = uniqueEmail();
    intranet.profile = { id: 4711, mail: email, mail_confirmed: false, displayName: 'Ada Lovelace', photo: { url: 'https://img.example/ada.png' } };
    const start = await t.http.get('/auth-api/auth/intranet').set(HEADER, store.codename).expect(302);
    expect(new URL(start.headers.location).searchParams.get('nonce')).toBeNull();

    const needed = await result(store.codename, (await signIn('intranet', store.codename)).searchParams.get('socialCode')!).expect(200);
    expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'intranet', email, emailVerified: false, fullname: 'Ada Lovelace', avatar: 'https://img.example/ada.png' } });
    const user = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ socialCode: needed.body.socialCode, password: PASSWORD }).expect(201);
    const session = await result(store.codename, (await signIn('intranet', store.codename)).searchParams.get('socialCode')!).expect(200);
    expect(session.body.userId).toBe(user.body.user.id);
  });

  it("the settings apply to every store, the accounts to their own: store A's link never signs in to store B", async () => {
    const a = await registerStore(t.http);
    const b = await registerStore(t.http);
    const sub = unique('corp');
    oidc.accounts[(oidc.nextAccount = sub)] = { upn: `${sub}@corp.example`, email_verified: true, given_name: 'Ann', family_name: 'A' };
    const first = await result(a.codename, (await signIn('corp', a.codename)).searchParams.get('socialCode')!).expect(200);
    await register(a.codename, first.body.socialCode).expect(201);
    const inA = await result(a.codename, (await signIn('corp', a.codename)).searchParams.get('socialCode')!).expect(200);
    expect(inA.body.tenantId).toBe(a.storeId);

    // A code of store A's flow is nothing in store B.
    const codeA = (await signIn('corp', a.codename)).searchParams.get('socialCode')!;
    expectError(await result(b.codename, codeA), 400, 'SocialCodeInvalid');
    // The same account at the provider, starting in store B, is a stranger there.
    const inB = await result(b.codename, (await signIn('corp', b.codename)).searchParams.get('socialCode')!).expect(200);
    expect(inB.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'corp' } });
  });

  it('a code the generic provider refuses: token_exchange_failed, logged at warn without the code or the secret', async () => {
    const store = await registerStore(t.http);
    oidc.accounts[(oidc.nextAccount = unique('corp'))] = { upn: uniqueEmail(), email_verified: true };
    const callback = await followRedirects(`${base}/auth-api/auth/corp?_store=${store.codename}`, `${base}/auth-api/auth/corp/callback`);
    const forged = `forged-${unique('code')}`;
    callback.searchParams.set('code', forged);
    const from = log.mark();
    const landed = await followRedirects(callback.toString(), FRONTEND);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ provider: 'corp', error: 'token_exchange_failed' });
    expect(log.since(from).filter((l) => l.level === 40)).toEqual([expect.objectContaining({ provider: 'corp', stage: 'token', error: 'invalid_grant' })]);
    for (const line of log.rawSince(from)) {
      expect(line).not.toContain(forged);
      expect(line).not.toContain('corp-client-secret');
    }
  });

  it('a provider registered in code by an extension module is offered and signs in like the others', async () => {
    const store = await registerStore(t.http);
    acme.profile = { login: unique('acme'), email: uniqueEmail(), name: 'Ext Ension' };
    const start = await t.http.get('/auth-api/auth/acme').set(HEADER, store.codename).expect(302);
    expect(start.headers.location).toContain(`${acme.url}/authorize?`);

    const landed = await signIn('acme', store.codename);
    expect(landed.searchParams.get('provider')).toBe('acme');
    const needed = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
    expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'acme', email: acme.profile.email, emailVerified: false, fullname: 'Ext Ension' } });
    const user = await register(store.codename, needed.body.socialCode).expect(201);
    const session = await result(store.codename, (await signIn('acme', store.codename)).searchParams.get('socialCode')!).expect(200);
    expect(session.body.userId).toBe(user.body.user.id);
    // Its return takes no form post: it did not ask for one.
    expectError(await t.http.post('/auth-api/auth/acme/callback').type('form').send('code=x&state=y'), 415, 'UnsupportedMediaType');
  });
});

describe('a generic provider that cannot be reached', () => {
  let t: TestApp;

  beforeAll(async () => {
    // A loopback port nothing listens on.
    const port = await freePort();
    t = await startApp({
      ...logged,
      env: { FRONTEND_URL: FRONTEND, GONE_SECRET: 'gone-client-secret', LOG_LEVEL: 'info' },
      settings: { socialLogin: { providers: { gone: { type: 'oidc', enabled: true, issuer: `http://127.0.0.1:${port}`, clientId: 'gone-client', clientSecret: { env: 'GONE_SECRET' } } } } },
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it('answers 502 SocialProviderUnavailable at the start, with the cause in one warn line', async () => {
    const store = await registerStore(t.http);
    const from = log.mark();
    expectError(await t.http.get('/auth-api/auth/gone').set(HEADER, store.codename), 502, 'SocialProviderUnavailable');
    const warned = log.since(from).filter((l) => l.level >= 40 && l.msg !== 'request completed');
    expect(warned).toEqual([expect.objectContaining({ level: 40, provider: 'gone', stage: 'discovery', cause: expect.stringContaining('ECONNREFUSED') })]);
  });
});

describe('sign-in provider settings refused at boot', () => {
  const env = { FRONTEND_URL: FRONTEND, S: 'client-secret' };
  const corp = { type: 'oidc' as const, enabled: true, issuer: 'https://id.corp.example', clientId: 'corp-client', clientSecret: { env: 'S' } };
  // The boot's one ConfigError, as its problems.
  const refused = async (opts: Parameters<typeof startApp>[0]): Promise<string[]> => {
    const error = await startApp(opts).then(
      async (t) => {
        await t.close();
        throw new Error('the boot was not refused');
      },
      (e: unknown) => e as { name: string; problems: string[] },
    );
    expect(error.name).toBe('ConfigError');
    return error.problems;
  };

  it('an unknown key, an issuer that is not an issuer URL and a missing client id, each named, in one error', async () => {
    const problems = await refused({
      env,
      settings: {
        socialLogin: {
          providers: {
            corp: { ...corp, issuerUrl: 'https://id.corp.example' } as never,
            query: { ...corp, issuer: 'https://id.corp.example/?tenant=1' },
            nothing: { ...corp, issuer: 'id.corp.example' },
            anonymous: { ...corp, clientId: undefined },
          },
        },
      },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'settings.socialLogin.providers.corp.issuerUrl: property issuerUrl should not exist',
        'settings.socialLogin.providers.query.issuer: issuer must be an http(s) URL without query or fragment',
        'settings.socialLogin.providers.nothing.issuer: issuer must be an http(s) URL without query or fragment',
        expect.stringMatching(/^settings\.socialLogin\.providers\.anonymous\.clientId: /),
      ]),
    );
  });

  it('a provider that is neither built in nor typed, a generic one without its secret, endpoints half given: named together', async () => {
    const problems = await refused({
      env,
      settings: {
        socialLogin: {
          providers: {
            myspace: { enabled: false, clientId: 'x' },
            corp: { ...corp, clientSecret: undefined },
            half: { ...corp, authorizationUrl: 'https://id.corp.example/authorize' },
          },
        },
      },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^settings\.socialLogin\.providers\.myspace: no built-in provider is named myspace .*"type": "oidc"/),
        'settings.socialLogin.providers.corp.clientSecret is required',
        expect.stringMatching(/^settings\.socialLogin\.providers\.half: authorizationUrl and tokenUrl go together/),
      ]),
    );
  });

  it('a provider name that is not an identifier, or single sign-on’s key', async () => {
    const problems = await refused({ env, settings: { socialLogin: { providers: { 'Corp Login': corp, sso: corp } } } });
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^settings\.socialLogin\.providers: provider names must be .*: Corp Login, sso$/)]));
  });

  it('a provider registered in code under a name the settings use, or not a name at all', async () => {
    const named = (name: string): SocialProvider => ({ name, authorizationUrl: async () => 'https://unused.example', profile: async () => undefined });
    const problems = await refused({ env, settings: { socialLogin: { providers: { corp } } }, imports: [signInExtension(named('corp'), named('No Name'))] });
    expect(problems).toEqual(
      expect.arrayContaining([
        'settings.socialLogin.providers.corp: an extension registers a sign-in provider of the same name',
        expect.stringMatching(/^sign-in provider "No Name" registered in code: a name is lowercase letters/),
      ]),
    );
  });
});
