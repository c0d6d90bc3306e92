import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { layoutProblems } from './browser-layout.js';
import { projectPath } from '../src/platform/config/project-path.js';
import { CHROMIUM, describeIf, freePort, login, PASSWORD, registerStore, startApp, unique, type RegisteredStore, type TestApp } from './helpers.js';

// The console's Applications screen (docs/console.md): the store's OAuth clients of its OpenID
// Connect provider (docs/oidc.md), in Debian's Chromium driven by playwright-core, against the
// service on a loopback port serving the built console. Each screen it passes through is written
// to test-output/console/ (git-ignored).

// The console is built when its sources changed since the last build (the script compares a hash
// of them: nothing is written when it is fresh), so the screen tested is the one in console/.
if (CHROMIUM) execFileSync(process.execPath, [projectPath('scripts', 'console-build.mjs')], { stdio: 'inherit' });
const BUILT = existsSync(projectPath('dist', 'console', 'index.html'));
const SHOTS = projectPath('test-output', 'console');
const describeInBrowser = describeIf(CHROMIUM && BUILT, !CHROMIUM ? 'needs Chromium, none is installed' : 'needs the built console (npm run build)');

describeInBrowser('the console Applications screen in a real browser (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  const closing: (() => Promise<unknown>)[] = [];

  async function listen(app: TestApp): Promise<string> {
    const port = await freePort();
    await new Promise<void>((resolve) => app.app.getHttpServer().listen(port, '127.0.0.1', resolve));
    return `http://localhost:${port}`;
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startApp({ env: { SERVICE_CODENAME: unique('cap') } });
    origin = await listen(t);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    for (const close of closing) await close();
    await t?.close();
  });

  // A page of its own (its own sessionStorage); confirm() dialogs accepted, their text kept.
  async function newPage(width = 1000): Promise<{ page: Page; asked: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 760 } });
    const page = await context.newPage();
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    return { page, asked };
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();

  async function openApplications(page: Page, at: string, store: RegisteredStore, width = 1000): Promise<void> {
    await page.goto(`${at}/console/?store=${encodeURIComponent(store.codename)}`);
    await page.getByLabel('Store').selectOption(store.codename);
    await page.getByLabel('Email or mobile').fill(store.ownerEmail);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await heading(page, 'Users');
    if (width < 760) await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Applications' }).click();
    await heading(page, 'Applications');
  }

  const admin = (store: RegisteredStore, token: string) => ({
    get: (path: string) => t.http.get(path).set('svc-store-codename', store.codename).set('authorization', `Bearer ${token}`),
  });

  // The provider's token endpoint, the client authenticated with HTTP Basic (client_secret_basic).
  const machineToken = (issuer: string, clientId: string, secret: string) =>
    t.http.post(`${new URL(issuer).pathname}/token`).auth(clientId, secret).type('form').send({ grant_type: 'client_credentials' });

  it('registers a confidential client (its secret shown once), lists, edits, rotates its secret (the old one refused at the token endpoint) and deletes it', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const { page, asked } = await newPage();
    await openApplications(page, origin, store);
    await page.getByText(`Acting on store ${store.codename}.`).waitFor();
    await page.getByText('No applications.').waitFor();

    // the store's issuer and discovery URL, as the provider publishes them: without PUBLIC_URL,
    // the address the request reached (the loopback address), not the page's host name
    const issuer = `${origin.replace('localhost', '127.0.0.1')}/auth-api/oidc/${store.codename}`;
    const published = await t.http.get(`/auth-api/oidc/${store.codename}/.well-known/openid-configuration`).expect(200);
    expect(published.body.issuer).toBe(issuer);
    // (the page's own guess, until the document answers, names localhost)
    await page.getByTestId('oidc-issuer').filter({ hasText: issuer }).waitFor();
    expect(await page.getByTestId('oidc-discovery').textContent()).toBe(`${issuer}/.well-known/openid-configuration`);
    const provider = page.getByRole('region', { name: 'OpenID Connect provider' });
    await provider.getByRole('button', { name: 'Copy the issuer' }).waitFor();
    await provider.getByRole('button', { name: 'Copy the discovery URL' }).waitFor();

    // refused by the service: a plain-http redirect URI off loopback, said as its sentence
    const form = page.getByRole('region', { name: 'Register an application' });
    await form.getByLabel('Name', { exact: true }).fill('Orders backend');
    await form.getByLabel('Redirect URIs', { exact: true }).fill('http://orders.example.com/callback');
    await form.getByRole('button', { name: 'Register the application' }).click();
    const refused = form.getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/^[A-Z][^{}]*\.$/);
    expect(await refused.textContent()).toContain('uses http on a host that is not loopback');

    // registered: confidential (client_secret_basic), with client_credentials and openid
    await form.getByLabel('Redirect URIs', { exact: true }).fill('https://orders.example.com/callback\n\nhttp://127.0.0.1:4999/callback');
    await form.getByLabel('Post-logout redirect URIs').fill('https://orders.example.com/');
    await form.getByLabel('client_credentials').check();
    await form.getByLabel('email').check();
    await form.getByRole('button', { name: 'Register the application' }).click();
    const once = form.getByRole('status', { name: 'Client secret' });
    await once.getByText('Copy its client secret now: you will not see it again.').waitFor();
    const secret = (await page.getByTestId('client-secret').textContent())!;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await once.getByRole('button', { name: 'Copy the client secret' }).waitFor();
    expect(await form.getByRole('alert').count()).toBe(0);

    const held = await admin(store, owner.accessToken).get('/auth-api/v1/oauthclients').expect(200);
    expect(held.body.oauthClients).toEqual([
      expect.objectContaining({
        name: 'Orders backend',
        redirectUris: ['https://orders.example.com/callback', 'http://127.0.0.1:4999/callback'],
        postLogoutRedirectUris: ['https://orders.example.com/'],
        grantTypes: ['authorization_code', 'client_credentials'],
        tokenEndpointAuthMethod: 'client_secret_basic',
        scopes: ['openid', 'email'],
        firstParty: false,
      }),
    ]);
    const { id, clientId } = held.body.oauthClients[0] as { id: string; clientId: string };
    await once.getByText(`client ID ${clientId}`, { exact: false }).waitFor();

    // listed
    const apps = page.getByRole('region', { name: `Applications of store ${store.codename}` });
    const row = apps.getByRole('row').filter({ hasText: clientId });
    await row.waitFor();
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(0, 6)).toEqual(['Orders backend', clientId, 'confidential', 'authorization_code\nclient_credentials', 'https://orders.example.com/callback\nhttp://127.0.0.1:4999/callback', 'no']);
    await shot(page, 'applications-created');

    // the secret authenticates the client at the store's issuer
    expect((await machineToken(issuer, clientId, secret).expect(200)).body.access_token).toBeTruthy();

    // once: leaving the screen and coming back, it is gone
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await heading(page, 'Webhooks');
    await page.getByRole('link', { name: 'Applications' }).click();
    await heading(page, 'Applications');
    await row.waitFor();
    expect(await page.getByTestId('client-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    // edited: name, redirect URIs, post-logout URIs, scopes, first party
    await page.getByRole('button', { name: 'Open the application Orders backend' }).click();
    const opened = page.getByRole('region', { name: 'Application Orders backend' });
    await opened.getByText(clientId, { exact: true }).waitFor();
    await opened.getByLabel('Name', { exact: true }).fill('Orders service');
    await opened.getByLabel('Redirect URIs', { exact: true }).fill('https://orders.example.com/cb');
    await opened.getByLabel('Post-logout redirect URIs').fill('https://orders.example.com/bye\nhttps://orders.example.com/');
    await opened.getByLabel('profile').check();
    await opened.getByLabel('email').uncheck();
    await opened.getByLabel('First party').check();
    await opened.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved in store ${store.codename}.`).waitFor();
    await row.getByRole('cell', { name: 'Orders service', exact: true }).waitFor();
    await row.getByRole('cell', { name: 'yes', exact: true }).waitFor();
    expect((await admin(store, owner.accessToken).get(`/auth-api/v1/oauthclients/${id}`).expect(200)).body.oauthClient).toMatchObject({
      name: 'Orders service',
      redirectUris: ['https://orders.example.com/cb'],
      postLogoutRedirectUris: ['https://orders.example.com/bye', 'https://orders.example.com/'],
      scopes: ['openid', 'profile'],
      firstParty: true,
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    // refused edit: the service's sentence
    const edited = page.getByRole('region', { name: 'Application Orders service' });
    await edited.getByLabel('Redirect URIs', { exact: true }).fill('https://orders.example.com/cb#fragment');
    await edited.getByRole('button', { name: 'Save' }).click();
    const editRefused = edited.getByRole('alert');
    await editRefused.waitFor();
    expect(await editRefused.textContent()).toMatch(/^[A-Z][^{}]*\.$/);
    await edited.getByLabel('Redirect URIs', { exact: true }).fill('https://orders.example.com/cb');

    // rotated: the new secret shown once; the old one no longer authenticates, the new one does
    await edited.getByRole('button', { name: 'Rotate the secret' }).click();
    const again = edited.getByRole('status', { name: 'Client secret' });
    await again.getByText(/has a new client secret; .* Copy its client secret now: you will not see it again\./).waitFor();
    const rotated = (await page.getByTestId('client-secret').textContent())!;
    expect(rotated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated).not.toBe(secret);
    expect(asked.at(-1)).toMatch(/^Give Orders service a new client secret\?/);
    const old = await machineToken(issuer, clientId, secret);
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('invalid_client');
    expect((await machineToken(issuer, clientId, rotated).expect(200)).body.access_token).toBeTruthy();
    expect({ width: 1000, problems: await layoutProblems(page) }).toEqual({ width: 1000, problems: [] });
    await shot(page, 'applications-rotated');
    await again.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByTestId('client-secret').waitFor({ state: 'detached' });

    // deleted, after a question naming the store
    await edited.getByRole('button', { name: 'Delete the application' }).click();
    await page.getByText(`The application Orders service (${clientId}) was deleted from store ${store.codename}: it can no longer sign anyone in.`).waitFor();
    expect(asked.at(-1)).toBe(`Delete the application Orders service (${clientId}) from store ${store.codename}? It can no longer sign anyone in.`);
    await page.getByText('No applications.').waitFor();
    await admin(store, owner.accessToken).get(`/auth-api/v1/oauthclients/${id}`).expect(404);
    expect((await machineToken(issuer, clientId, rotated)).status).toBe(401);
  }, 90_000);

  it('registers a public client: no secret, no rotation; at 390 px nothing scrolls sideways', async () => {
    const store = await registerStore(t.http);
    const { page } = await newPage(390);
    await openApplications(page, origin, store, 390);
    const form = page.getByRole('region', { name: 'Register an application' });
    await form.getByLabel('Name', { exact: true }).fill('Orders mobile app');
    await form.getByLabel('Redirect URIs', { exact: true }).fill('com.example.orders:/callback');
    await form.getByLabel('Client authentication').selectOption('none');
    await form.getByLabel('refresh_token').check();
    await form.getByLabel('offline_access').check();
    await form.getByRole('button', { name: 'Register the application' }).click();
    const done = form.getByRole('status', { name: 'Registered' });
    await done.getByText(/It is a public client: it has no secret/).waitFor();
    expect(await page.getByTestId('client-secret').count()).toBe(0);
    expect(await page.getByText('you will not see it again').count()).toBe(0);

    const row = page.getByRole('region', { name: `Applications of store ${store.codename}` }).getByRole('row').filter({ hasText: 'Orders mobile app' });
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells[2]).toBe('public');
    expect(cells[3]).toBe('authorization_code\nrefresh_token');
    await page.getByRole('button', { name: 'Open the application Orders mobile app' }).click();
    const opened = page.getByRole('region', { name: 'Application Orders mobile app' });
    await opened.getByRole('button', { name: 'Delete the application' }).waitFor();
    expect(await opened.getByRole('button', { name: 'Rotate the secret' }).count()).toBe(0);
    expect({ width: 390, problems: await layoutProblems(page) }).toEqual({ width: 390, problems: [] });
    await shot(page, '390px-applications');
  }, 90_000);

  // The owner lets an application sign it in: the provider's pages, submitted as a browser would.
  async function consentAs(store: RegisteredStore, clientId: string): Promise<void> {
    const cookies = new Map<string, string>();
    const go = async (url: string, form?: Record<string, string>): Promise<Response> => {
      const headers: Record<string, string> = cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
      const res = await fetch(url, form ? { method: 'POST', redirect: 'manual', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) } : { redirect: 'manual', headers });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      return res;
    };
    const base = origin.replace('localhost', '127.0.0.1');
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    let res = await go(`${base}/auth-api/oidc/${store.codename}/auth?${new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid email', redirect_uri: 'http://127.0.0.1:4999/callback', code_challenge: challenge, code_challenge_method: 'S256' })}`);
    for (let hops = 0; hops < 12; hops++) {
      if (res.status === 302 || res.status === 303) {
        const to = new URL(res.headers.get('location')!, base).href;
        if (to.startsWith('http://127.0.0.1:4999/callback')) return;
        res = await go(to);
        continue;
      }
      const html = await res.text();
      const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&'), base).href;
      res = await go(action, html.includes('name="password"') ? { username: store.ownerEmail, password: PASSWORD } : {});
    }
    throw new Error('the sign-in did not come back to the application');
  }

  it("lists in My security the applications the administrator let sign it in, and revokes one", async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const created = await t.http
      .post('/auth-api/v1/oauthclients')
      .set('svc-store-codename', store.codename)
      .set('authorization', `Bearer ${owner.accessToken}`)
      .send({ name: 'Partner portal', redirectUris: ['http://127.0.0.1:4999/callback'], scopes: ['openid', 'email'] })
      .expect(201);
    await consentAs(store, created.body.oauthClient.clientId);

    const { page, asked } = await newPage();
    await openApplications(page, origin, store);
    await page.getByRole('link', { name: 'My security' }).click();
    await heading(page, 'My security');
    const list = page.getByRole('list', { name: 'Applications you let sign you in' });
    await list.getByText('Partner portal').waitFor();
    await list.getByText(/openid, email/).waitFor();
    await page.getByRole('button', { name: 'Revoke the access of Partner portal' }).click();
    await list.getByText('No application yet.').waitFor();
    expect(asked).toEqual([expect.stringContaining('Revoke the access of Partner portal?')]);
    const left = await t.http.get('/auth-api/oauth/consents').set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`).expect(200);
    expect(left.body.consents).toEqual([]);
    await shot(page, 'security-applications');
  }, 90_000);

  it('with oidcProvider.enabled false, says the provider is off, naming the key, and offers nothing', async () => {
    const off = await startApp({ env: { SERVICE_CODENAME: unique('cao') }, settings: { oidcProvider: { enabled: false } } });
    closing.push(() => off.close());
    const at = await listen(off);
    const store = await registerStore(off.http);
    const { page } = await newPage();
    await openApplications(page, at, store);
    await page.getByRole('status').filter({ hasText: "The OpenID Connect provider is off in this service's settings (oidcProvider.enabled)." }).waitFor();
    expect(await page.locator('main').getByRole('button').count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Register an application' }).count()).toBe(0);
    await shot(page, 'applications-off');
  }, 90_000);
});
