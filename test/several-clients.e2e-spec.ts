import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { ParsedMail } from 'mailparser';
import { createClient } from '@svc/client';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, waitFor, type TestApp } from './helpers.js';
import { smtp, startMailServer, type MailServer } from './mail-server.js';
import { followRedirects, startOAuthServer, startOidcProvider, type OAuthPeer, type OidcPeer } from './oauth-peers.js';

// Several client applications of one deployment (a web app, a mobile app's pages, an admin app):
// social login and single sign-on return to the callback the sign-in names among
// `socialLogin.redirectUrl(s)`, and verification, password reset and passwordless links point
// to the client the request names among `verification.frontendUrl(s)`. Real peers on loopback:
// oauth2-mock-server for GitLab, oidc-provider for single sign-on, an SMTP server for the mail.

const HEADER = 'svc-store-codename';
// The client applications are not running: a browser's redirects stop at their addresses.
const CLIENTS = 'http://127.0.0.1:9/';
const WEB_CALLBACK = 'http://127.0.0.1:9/web/auth/callback';
const MOBILE_CALLBACK = 'http://127.0.0.1:9/mobile/auth/callback';
// FRONTEND_URL's callback, no longer accepted once addresses are listed.
const FRONTEND = 'http://127.0.0.1:9/frontend';

const WEB = 'http://127.0.0.1:9/web';
const ADMIN = 'http://localhost:9/admin';
// Listed with its trailing slash: named exactly so, and the link gets no double slash.
const MOBILE = 'http://127.0.0.1:9/mobile/';

describe('several client applications per store', () => {
  let t: TestApp;
  let base: string;
  let gitlab: OAuthPeer;
  let oidc: OidcPeer;
  let mail: MailServer;

  beforeAll(async () => {
    [gitlab, oidc, mail] = await Promise.all([startOAuthServer(), startOidcProvider(), startMailServer()]);
    t = await startApp({
      // A deployment of its own: no other suite's app takes its notification jobs on Redis.
      env: { SERVICE_CODENAME: unique('c'), FRONTEND_URL: FRONTEND, GITLAB_SECRET: 'gitlab-secret', SSO_SECRET: 'sso-secret' },
      settings: {
        socialLogin: {
          redirectUrls: [WEB_CALLBACK, MOBILE_CALLBACK],
          providers: {
            gitlab: { enabled: true, clientId: 'gitlab-client', clientSecret: { env: 'GITLAB_SECRET' }, authorizationUrl: `${gitlab.url}/authorize`, tokenUrl: `${gitlab.url}/token`, profileUrl: `${gitlab.url}/userinfo` },
          },
        },
        sso: { ssoName: 'corp', tokenPeriodInMinutes: 60, emailPropertyInProfile: 'email', tokenHost: oidc.issuer, clientId: 'sso-client', clientSecret: { env: 'SSO_SECRET' } },
        verification: {
          verificationMode: 'liveMode',
          frontendUrl: WEB,
          frontendUrls: [ADMIN, MOBILE],
          flows: {
            'email-verification': { enabled: true, verificationType: 'byLink' },
            'password-reset-by-email': { enabled: true, verificationType: 'byLink' },
          },
        },
        passwordlessLogin: { enabled: true, channels: ['email'], verificationType: 'byLink', allowSignUp: false },
        notifications: {
          providers: [smtp('mail', mail.port)],
          channels: [
            { channelName: 'email', providers: ['mail'], fallbackProviders: [] },
            { channelName: 'inApp', providers: [], fallbackProviders: [] },
          ],
          worker: { concurrency: 5, maxAttempts: 3, backoffMs: 30 },
        },
      },
    });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    oidc.serve([{ client_id: 'sso-client', client_secret: 'sso-secret', redirect_uris: [`${base}/auth-api/sso/callback`] }]);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await Promise.all([gitlab?.close(), oidc?.close(), mail?.close()]);
  });

  const result = (codename: string, socialCode: string) => t.http.post('/auth-api/auth/social-login-result').set(HEADER, codename).send({ socialCode });
  const withRedirect = (path: string, codename: string, redirectUrl?: string) => `${base}${path}?_store=${codename}${redirectUrl === undefined ? '' : `&redirectUrl=${encodeURIComponent(redirectUrl)}`}`;

  describe('social login and single sign-on', () => {
    it('a sign-in naming a listed callback lands there with a socialCode that signs in', async () => {
      const store = await registerStore(t.http);
      gitlab.profile = { id: unique('id'), username: 'mo', name: 'Mo Bile', email: uniqueEmail(), confirmed_at: '2024-01-01T00:00:00Z' };

      const start = await fetch(withRedirect('/auth-api/auth/gitlab', store.codename, MOBILE_CALLBACK), { redirect: 'manual' });
      expect(start.status).toBe(302);
      expect(start.headers.get('location')).toContain(`${gitlab.url}/authorize?`);

      const landed = await followRedirects(withRedirect('/auth-api/auth/gitlab', store.codename, MOBILE_CALLBACK), CLIENTS);
      expect(landed.origin + landed.pathname).toBe(MOBILE_CALLBACK);
      expect(landed.searchParams.get('provider')).toBe('gitlab');
      const needed = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
      expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'gitlab', fullname: 'Mo Bile' } });
    });

    it('through @svc/client: the URL to leave for, the code back, a registration with it, then a sign-in', async () => {
      const store = await registerStore(t.http);
      const email = uniqueEmail();
      const profile = { id: unique('id'), username: 'cl', name: 'Cli Ent', email, confirmed_at: '2024-01-01T00:00:00Z' };
      const client = createClient({ baseUrl: base, store: store.codename });
      const url = client.social.url('gitlab', { redirectUrl: MOBILE_CALLBACK });
      expect(url).toBe(withRedirect('/auth-api/auth/gitlab', store.codename, MOBILE_CALLBACK));

      gitlab.profile = profile;
      const first = await followRedirects(url, CLIENTS);
      expect(first.origin + first.pathname).toBe(MOBILE_CALLBACK);
      const needed = await client.completeSocialCode(first.searchParams.get('socialCode')!);
      expect(needed).toMatchObject({ status: 'registrationNeeded', accountInfo: { provider: 'gitlab', fullname: 'Cli Ent' } });
      if (needed.status !== 'registrationNeeded') throw new Error('expected a registration');
      await client.signUp.user({ email, fullname: 'Cli Ent', socialCode: needed.socialCode });

      gitlab.profile = profile;
      const again = await followRedirects(client.social.url('gitlab', { redirectUrl: MOBILE_CALLBACK }), CLIENTS);
      const signedIn = await client.completeSocialCode(again.searchParams.get('socialCode')!);
      expect(signedIn).toMatchObject({ status: 'signedIn', session: { email, store: store.codename } });
      expect((await client.currentUser())?.email).toBe(email);
    });

    it('a sign-in naming no callback lands on the first listed one', async () => {
      const store = await registerStore(t.http);
      gitlab.profile = { id: unique('id'), username: 'we', name: 'Web Ster', email: uniqueEmail() };
      const landed = await followRedirects(withRedirect('/auth-api/auth/gitlab', store.codename), CLIENTS);
      expect(landed.origin + landed.pathname).toBe(WEB_CALLBACK);
      expect(landed.searchParams.get('socialCode')).toBeTruthy();
    });

    it('refuses a callback that is not listed exactly, FRONTEND_URL\'s included, before the provider is asked', async () => {
      for (const unlisted of [
        'http://127.0.0.1:9/other/auth/callback',
        `${MOBILE_CALLBACK}/`,
        `${MOBILE_CALLBACK}?x=1`,
        MOBILE_CALLBACK.toUpperCase(),
        `${FRONTEND}/auth/callback`,
        '',
      ]) {
        expectError(await t.http.get(`/auth-api/auth/gitlab?redirectUrl=${encodeURIComponent(unlisted)}`), 400, 'SocialRedirectNotAllowed');
      }
      // A repeated parameter is no address.
      expectError(await t.http.get(`/auth-api/auth/gitlab?redirectUrl=${encodeURIComponent(WEB_CALLBACK)}&redirectUrl=${encodeURIComponent(MOBILE_CALLBACK)}`), 400, 'SocialRedirectNotAllowed');
    });

    it('single sign-on lands on the listed callback it names, and refuses an unlisted one', async () => {
      const store = await registerStore(t.http);
      const sub = unique('emp');
      oidc.accounts[sub] = { email: uniqueEmail(), email_verified: true, name: 'Ed Sso' };
      oidc.nextAccount = sub;

      const landed = await followRedirects(withRedirect('/auth-api/sso/login', store.codename, MOBILE_CALLBACK), CLIENTS);
      expect(landed.origin + landed.pathname).toBe(MOBILE_CALLBACK);
      expect(landed.searchParams.get('provider')).toBe('corp');
      const needed = await result(store.codename, landed.searchParams.get('socialCode')!).expect(200);
      expect(needed.body).toMatchObject({ type: 'RegisterNeededForSocialLogin', accountInfo: { provider: 'corp', fullname: 'Ed Sso' } });

      oidc.nextAccount = sub;
      const first = await followRedirects(withRedirect('/auth-api/sso/login', store.codename), CLIENTS);
      expect(first.origin + first.pathname).toBe(WEB_CALLBACK);

      expectError(await t.http.get(`/auth-api/sso/login?redirectUrl=${encodeURIComponent('http://localhost:9/mobile/auth/callback')}`), 400, 'SocialRedirectNotAllowed');
    });
  });

  describe('verification, password reset and passwordless links', () => {
    const V = '/auth-api/verification-services';

    async function registerUser() {
      const store = await registerStore(t.http);
      const email = uniqueEmail();
      const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Ada Lovelace' }).expect(201);
      return { id: res.body.user.id as string, email, store };
    }

    // The n-th message to the address (1-based), once it has arrived.
    const nthMail = (address: string, n = 1): Promise<ParsedMail> => waitFor(`mail ${n} to ${address}`, () => mail.to(address)[n - 1]?.mail);
    // The link of the mail, under `client` (without its trailing slash) and `path`: its token.
    function tokenIn(message: ParsedMail, client: string, path: string): string {
      const text = `${message.text ?? ''}\n${typeof message.html === 'string' ? message.html : ''}`;
      const links = [...text.matchAll(/https?:\/\/[^\s"<>]+/g)].map((m) => m[0]);
      const prefix = `${client.replace(/\/$/, '')}/${path}/`;
      const link = links.find((l) => l.startsWith(prefix));
      if (!link) throw new Error(`no link under ${prefix} in: ${links.join(', ')}`);
      return link.slice(prefix.length);
    }

    it('email verification: the link points to the named client, and its token verifies', async () => {
      const user = await registerUser();
      await t.http.post(`${V}/email-verification/start`).set(HEADER, user.store.codename).send({ email: user.email, frontendUrl: ADMIN }).expect(200);
      const token = tokenIn(await nthMail(user.email), ADMIN, 'emailVerification');
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const done = await t.http.post(`${V}/email-verification/complete`).set(HEADER, user.store.codename).send({ secretCode: token }).expect(200);
      expect(done.body).toMatchObject({ status: 'OK', isVerified: true, email: user.email });
    });

    it('email verification: without frontendUrl the link points to verification.frontendUrl', async () => {
      const user = await registerUser();
      await t.http.post(`${V}/email-verification/start`).set(HEADER, user.store.codename).send({ email: user.email }).expect(200);
      tokenIn(await nthMail(user.email), WEB, 'emailVerification');
    });

    it('password reset: the link points to the named client (listed with a trailing slash), and the new password works', async () => {
      const user = await registerUser();
      await t.http.post(`${V}/password-reset-by-email/start`).set(HEADER, user.store.codename).send({ email: user.email, frontendUrl: MOBILE }).expect(200);
      const message = await nthMail(user.email);
      expect(message.text).not.toContain(`${MOBILE}/`);
      const token = tokenIn(message, MOBILE, 'passwordResetByEmail');
      await t.http.post(`${V}/password-reset-by-email/complete`).set(HEADER, user.store.codename).send({ secretCode: token, password: 'a brand new secret' }).expect(200);
      await login(t.http, user.email, 'a brand new secret', user.store.codename);
    });

    it('refuses a frontendUrl that is not listed exactly with 400 FrontendUrlNotAllowed, before any code is issued', async () => {
      const user = await registerUser();
      for (const unlisted of ['http://127.0.0.1:9/evil', `${ADMIN}/`, 'http://127.0.0.1:9/mobile', 'http://LOCALHOST:9/admin', FRONTEND]) {
        expectError(await t.http.post(`${V}/password-reset-by-email/start`).set(HEADER, user.store.codename).send({ email: user.email, frontendUrl: unlisted }), 400, 'FrontendUrlNotAllowed');
      }
      // An address without an account is refused alike: the answer tells nothing of accounts.
      expectError(await t.http.post(`${V}/password-reset-by-email/start`).set(HEADER, user.store.codename).send({ email: uniqueEmail(), frontendUrl: 'http://127.0.0.1:9/evil' }), 400, 'FrontendUrlNotAllowed');
      // Nothing was issued: a start right after is no resend within resendTimeWindow.
      await t.http.post(`${V}/password-reset-by-email/start`).set(HEADER, user.store.codename).send({ email: user.email, frontendUrl: ADMIN }).expect(200);
      tokenIn(await nthMail(user.email), ADMIN, 'passwordResetByEmail');
      expect(mail.to(user.email)).toHaveLength(1);
    });

    it('a frontendUrl that is no http(s) address is a validation error, and the routes that take a link back refuse one', async () => {
      const user = await registerUser();
      for (const bad of ['javascript:alert(1)', 'http://127.0.0.1:9/web?x=1', 42]) {
        expectError(await t.http.post(`${V}/email-verification/start`).set(HEADER, user.store.codename).send({ email: user.email, frontendUrl: bad }), 400, 'ValidationFailed');
      }
      expectError(await t.http.post(`${V}/email-verification/complete`).set(HEADER, user.store.codename).send({ secretCode: 'x', frontendUrl: ADMIN }), 400, 'UnknownField');
      expectError(await t.http.post('/auth-api/passwordless/complete').set(HEADER, user.store.codename).send({ token: 'abc', frontendUrl: ADMIN }), 400, 'UnknownField');
    });

    it('passwordless: the link points to the named client and signs in; none: the default; unlisted: refused', async () => {
      const user = await registerUser();
      expectError(await t.http.post('/auth-api/passwordless/start').set(HEADER, user.store.codename).send({ email: user.email, frontendUrl: 'http://localhost:9/evil' }), 400, 'FrontendUrlNotAllowed');

      await t.http.post('/auth-api/passwordless/start').set(HEADER, user.store.codename).send({ email: user.email, frontendUrl: ADMIN }).expect(200);
      const token = tokenIn(await nthMail(user.email), ADMIN, 'passwordlessLogin');
      const session = await t.http.post('/auth-api/passwordless/complete').set(HEADER, user.store.codename).send({ token }).expect(200);
      expect(session.body).toMatchObject({ userId: user.id, accessToken: expect.any(String) });

      const other = await registerUser();
      await t.http.post('/auth-api/passwordless/start').set(HEADER, other.store.codename).send({ email: other.email }).expect(200);
      tokenIn(await nthMail(other.email), WEB, 'passwordlessLogin');
    });

    it('documents frontendUrl on the routes that send a link, and not on those that take one back', async () => {
      const doc = (await t.http.get('/docs-json').expect(200)).body as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } }>>; components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> } };
      const bodyOf = (path: string) => {
        const ref = doc.paths[path].post.requestBody!.content['application/json'].schema.$ref!;
        return doc.components.schemas[ref.split('/').pop()!].properties ?? {};
      };
      expect(bodyOf('/auth-api/verification-services/{flow}/start').frontendUrl?.description).toContain('verification.frontendUrls');
      expect(bodyOf('/auth-api/passwordless/start').frontendUrl?.description).toContain('verification.frontendUrls');
      expect(bodyOf('/auth-api/verification-services/{flow}/complete')).not.toHaveProperty('frontendUrl');
      expect(bodyOf('/auth-api/passwordless/complete')).not.toHaveProperty('frontendUrl');
    });
  });
});

describe('several client applications: settings', () => {
  it('a listed address that is not an http(s) one stops the boot, each list named', async () => {
    const refused = startApp({
      settings: {
        socialLogin: { redirectUrls: [WEB_CALLBACK, 'myapp://auth/callback'], providers: {} },
        verification: { frontendUrl: WEB, frontendUrls: [ADMIN, 'http://127.0.0.1:9/admin?x=1'] },
      },
    });
    await expect(refused).rejects.toThrow(/redirectUrls/);
    await expect(refused).rejects.toThrow(/frontendUrls/);
  });
});
