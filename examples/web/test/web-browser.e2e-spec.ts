import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Secret, TOTP } from 'otpauth';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, describeWithChromium, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp } from '../../../test/helpers.js';

// The web example as its users see it: built by Vite, served on a loopback origin of its own,
// calling the service cross-origin from headless Chromium (passkeys through a CDP virtual
// authenticator). Sign-up, password sign-in, live events, passkeys, the authenticator-app step
// and sign-out, each through the page.

const HERE = fileURLToPath(new URL('..', import.meta.url));
const HEADER = 'svc-store-codename';
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

// `vite build` through Vite's JS API, in a process of its own: its bundler's native binding
// refuses objects made inside Jest's module sandbox.
async function buildSite(outDir: string): Promise<void> {
  const script = `const { build } = await import('vite'); await build({ configFile: ${JSON.stringify(join(HERE, 'vite.config.ts'))}, logLevel: 'warn', build: { outDir: ${JSON.stringify(outDir)}, emptyOutDir: true } });`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: HERE, env: { ...process.env, NODE_OPTIONS: '' } });
}

// The build's files, and index.html for any other path (as a static host serves an SPA).
function serve(dir: string): Server {
  return createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path);
    const found = file.startsWith(dir) && existsSync(file) && statSync(file).isFile() ? file : join(dir, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[extname(found)] ?? 'application/octet-stream' }).end(readFileSync(found));
  });
}

describeWithChromium('the web example (React, @svc/react) in Chromium', () => {
  let t: TestApp;
  let outDir: string;
  let site: Server;
  let browser: Browser;
  let page: Page;
  let store: RegisteredStore;
  const pageErrors: string[] = [];
  // The user who signs up in the page.
  const email = uniqueEmail();

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'svc-web-'));
    await buildSite(outDir);
    site = serve(outDir);
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    // localhost (mapped to 127.0.0.1 in the browser): a secure context, and a valid passkey RP id.
    const origin = `http://localhost:${(site.address() as AddressInfo).port}`;
    const shipped = JSON.parse(readFileSync(join(HERE, 'service-settings.json'), 'utf8')) as { cors: Record<string, unknown>; webauthn: Record<string, unknown> };
    t = await startApp({
      env: { SERVICE_CODENAME: unique('web') },
      // The settings the README starts the service with, for this page's origin.
      settings: { cors: { ...shipped.cors, allowedOrigins: [origin] }, webauthn: { ...shipped.webauthn, origins: [origin] } },
    });
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(0, '127.0.0.1', resolve));
    const serviceUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    store = await registerStore(t.http);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
    page = await browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await page.goto(`${origin}/?${new URLSearchParams({ service: serviceUrl, store: store.codename })}`);
    await page.getByRole('status').filter({ hasText: 'Signed out' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (site ? site.close(resolve) : resolve(undefined)));
    await t?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  const signedInAs = (who: string) => page.getByRole('status').filter({ hasText: `Signed in as ${who}` }).waitFor();
  // The session the app keeps in the page's localStorage (the test compiles without DOM types).
  const storedSession = () =>
    page.evaluate((key) => (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem(key), `svc.session.${store.codename}`);
  const signedOut = () => page.getByRole('status').filter({ hasText: 'Signed out' }).waitFor();
  const passwordSignIn = async (username: string, password: string) => {
    await page.getByLabel('Email', { exact: true }).fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  };
  // A user of the store registered by another client of the service.
  const registerUser = async (address: string) =>
    t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email: address, password: PASSWORD, fullname: 'Other User' }).expect(201);

  it('signs up a user of the store, shows a refused password, signs in and shows the user', async () => {
    await page.getByLabel('Full name').fill('Web User');
    await page.getByLabel('New account email').fill(email);
    await page.getByLabel('New account password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText(`Account created for ${email}`).waitFor();

    await passwordSignIn(email, 'not the password');
    await page.getByRole('alert').filter({ hasText: 'errMsg_InvalidCredentials' }).waitFor();
    await passwordSignIn(email, PASSWORD);
    await signedInAs(email);
    expect(JSON.parse((await storedSession()) ?? 'null')?.email).toBe(email);
  }, 20_000);

  it('shows a user who joins the store, live', async () => {
    await page.locator('[data-subscribed="userCreated"]').waitFor();
    const other = uniqueEmail();
    await registerUser(other);
    await page.getByRole('list', { name: 'New users' }).getByText(other).waitFor();
  }, 20_000);

  it('adds a passkey, signs out, and signs in again with the passkey alone', async () => {
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Passkey added: This browser').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signedOut();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await signedInAs(email);
  }, 20_000);

  it('asks a user with an authenticator app for its code, then signs in', async () => {
    const totpEmail = uniqueEmail();
    await registerUser(totpEmail);
    const { accessToken } = await login(t.http, totpEmail, PASSWORD, store.codename);
    const as = (path: string) => t.http.post(path).set(HEADER, store.codename).set('authorization', `Bearer ${accessToken}`);
    const setup = await as('/auth-api/mfa/totp/setup').expect(200);
    const secret = Secret.fromBase32(setup.body.secret as string);
    const now = Date.now();
    await as('/auth-api/mfa/totp/confirm').send({ code: TOTP.generate({ secret, timestamp: now }) }).expect(200);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signedOut();
    await passwordSignIn(totpEmail, PASSWORD);
    await page.getByRole('heading', { name: 'Second step' }).waitFor();
    // A recovery code instead: a wrong one is refused, in the step's alert.
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('Recovery code').fill('not-a-recovery-code');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: /errMsg_/ }).waitFor();
    await page.getByRole('button', { name: 'Use your authenticator app instead' }).click();
    // The next step's code (an app a little ahead): the confirming one is spent.
    await page.getByLabel('Code from your authenticator app').fill(TOTP.generate({ secret, timestamp: now + 30_000 }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedInAs(totpEmail);

    // Live events follow the signed-in user: the list starts again, subscribed for this one.
    const newUsers = page.getByRole('list', { name: 'New users' });
    await page.locator('[data-subscribed="userCreated"]').waitFor();
    expect(await newUsers.getByRole('listitem').count()).toBe(0);
    const other = uniqueEmail();
    await registerUser(other);
    await newUsers.getByText(other).waitFor();
  }, 20_000);

  it('signs out: the page shows it and keeps no session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signedOut();
    expect(await storedSession()).toBeNull();
    expect(pageErrors).toEqual([]);
  }, 20_000);
});
