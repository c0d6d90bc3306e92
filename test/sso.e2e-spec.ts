import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { expectError, registerStore, startApp, unique, uniqueEmail, type TestApp } from './helpers.js';
import { followRedirects, startOidcProvider, type OidcPeer } from './oauth-peers.js';

// Single sign-on against oidc-provider on loopback: discovery, authorization code with PKCE,
// then the service's own session.
const FRONTEND = 'http://127.0.0.1:9/app';
const CALLBACK = `${FRONTEND}/auth/callback`;

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
      env: { FRONTEND_URL: FRONTEND, SSO_SECRET: 'sso-secret' },
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
