import { existsSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { layoutProblems } from './browser-layout.js';
import { Webhook } from 'standardwebhooks';
import { ManualClock } from '../src/platform/clock/clock.js';
import { projectPath } from '../src/platform/config/project-path.js';
import { CHROMIUM, describeIf, freePort, login, PASSWORD, registerStore, startApp, unique, type RegisteredStore, type TestApp } from './helpers.js';
import { WebhookReceiver } from './webhook-receiver.js';

// The console's Webhooks screen (docs/console.md) in a real browser: Debian's Chromium driven by
// playwright-core, against the service on a loopback port serving the built console, its
// deliveries going to a receiver on 127.0.0.1 (the settings allow http and private addresses).
// Each screen it passes through is written to test-output/console/ (git-ignored).

const BUILT = existsSync(projectPath('dist', 'console', 'index.html'));
const SHOTS = projectPath('test-output', 'console');
const describeInBrowser = describeIf(CHROMIUM && BUILT, !CHROMIUM ? 'needs Chromium, none is installed' : 'needs the built console (npm run build)');

// A description that would be an element (and run its handler) if the screen wrote HTML.
const MARKUP = '<img src=x onerror="window.__injected = 1">';

describeInBrowser('the console Webhooks screen in a real browser (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let origin: string;
  // Held still: a delivery answered 500 is not tried again by the service's schedule (5 s on)
  // while the test looks at it; only the Retry button tries it again.
  const clock = new ManualClock();
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const port = await freePort();
    origin = `http://localhost:${port}`;
    [t, receiver] = await Promise.all([startApp({ clock, env: { SERVICE_CODENAME: unique('cwh') }, settings: { webhooks: { allowHttp: true, allowPrivateNetworks: true } } }), WebhookReceiver.start()]);
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(port, '127.0.0.1', resolve));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.close();
  });

  // A page of its own (its own sessionStorage); confirm() dialogs accepted.
  async function newPage(width = 1000): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 760 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

  async function signIn(page: Page, store: string, username: string): Promise<void> {
    await page.goto(`${origin}/console/?store=${encodeURIComponent(store)}`);
    await page.getByLabel('Store').selectOption(store);
    await page.getByLabel('Email or mobile').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();

  async function openWebhooks(page: Page, store: RegisteredStore): Promise<void> {
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await heading(page, 'Webhooks');
  }

  const api = (store: RegisteredStore, token: string) => {
    const auth = <T extends { set(name: string, value: string): T }>(req: T) => req.set('svc-store-codename', store.codename).set('authorization', `Bearer ${token}`);
    return {
      get: (path: string) => auth(t.http.get(path)),
      post: (path: string) => auth(t.http.post(path)),
    };
  };

  it('adds an endpoint (its secret shown once), sends tests, reads and filters the delivery log, retries a failed one, disables the endpoint', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const url = receiver.url(`/console-${store.codename}`);
    const path = new URL(url).pathname;
    const page = await newPage();
    await openWebhooks(page, store);
    await page.getByText('No endpoints.').waitFor();
    await page.getByText(`Acting on store ${store.codename}.`).waitFor();

    // refused: no topic picked (said before any call), then a URL the service will not call
    const add = page.getByRole('region', { name: 'Add an endpoint' });
    await add.getByLabel('Endpoint URL').fill('ftp://127.0.0.1/hook');
    await add.getByRole('button', { name: 'Add the endpoint' }).click();
    await add.getByRole('alert').getByText('Pick at least one topic.').waitFor();
    await add.getByLabel('user-created').check();
    await add.getByRole('button', { name: 'Add the endpoint' }).click();
    const refused = add.getByRole('alert').filter({ hasText: /.+/ }).filter({ hasNotText: 'Pick at least one topic.' });
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/^[A-Z][^{}]*\.$/);

    // added: an API event and an audit entry, a description with markup
    await add.getByLabel('Endpoint URL').fill(url);
    await add.getByLabel('Description').fill(MARKUP);
    await add.getByText(/^Audit entries/).click();
    await add.getByLabel('audit:user.login.failed').check();
    await add.getByText('Audit entries (1 picked)').waitFor();
    await add.getByRole('button', { name: 'Add the endpoint' }).click();
    const shown = add.getByRole('status', { name: 'Signing secret' });
    await shown.getByText('Copy its signing secret now: you will not see it again.').waitFor();
    const secret = (await page.getByTestId('webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await shown.getByRole('button', { name: 'Copy' }).waitFor();

    const endpoints = page.getByRole('region', { name: `Endpoints of store ${store.codename}` });
    const row = endpoints.getByRole('row').filter({ hasText: url });
    await row.waitFor();
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(0, 4)).toEqual([url, 'user-created, audit:user.login.failed', MARKUP, 'enabled']);
    expect(cells[4]).toBe('Open');
    // the markup is text: no element made of it, no handler run
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).__injected)).toBeUndefined();
    await shot(page, 'webhooks-created');

    // what the service holds
    const listed = await api(store, owner.accessToken).get('/auth-api/v1/webhooks').expect(200);
    expect(listed.body.webhooks).toEqual([expect.objectContaining({ url, topics: ['user-created', 'audit:user.login.failed'], description: MARKUP, enabled: true })]);
    const id = listed.body.webhooks[0].id as string;

    // the secret once: closed, it is gone, and a reload does not bring it back
    await shown.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByTestId('webhook-secret').waitFor({ state: 'detached' });
    await page.reload();
    await heading(page, 'Webhooks');
    await row.waitFor();
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret.slice(6, 30));

    // a test, delivered: signed with the secret the screen showed
    await page.getByRole('button', { name: `Open the endpoint ${url}` }).click();
    const endpoint = page.getByRole('region', { name: `Endpoint ${url}` });
    const log = page.getByRole('region', { name: `Deliveries to ${url}` });
    await log.getByText('No deliveries yet.').waitFor();
    await endpoint.getByRole('button', { name: 'Send a test' }).click();
    const tested = endpoint.getByRole('status', { name: 'Test delivery' });
    await tested.getByText(/^Test sent: delivered, answered 200 in \d+ ms\.$/).waitFor();
    await tested.getByText('answered 200', { exact: true }).waitFor();
    expect(receiver.to(path)).toHaveLength(1);
    const [got] = receiver.to(path);
    const headers = { 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': String(got.headers['webhook-signature']) };
    expect(new Webhook(secret).verify(got.body, headers)).toMatchObject({ type: 'webhook.test' });
    const rows = log.getByRole('row').filter({ hasText: 'webhook.test' });
    await rows.first().waitFor();
    const delivered = await rows.first().getByRole('cell').allInnerTexts();
    expect(delivered.slice(0, 4)).toEqual(['webhook.test', 'delivered', '1', expect.stringMatching(/^200 \(\d+ ms\)$/)]);
    expect(delivered[4]).not.toMatch(/—|next/);

    // answered 500: pending, to be tried again; its answer on demand
    receiver.answer = () => 500;
    await endpoint.getByRole('button', { name: 'Send a test' }).click();
    await tested.getByText(/^Test sent: pending, answered 500 in \d+ ms\.$/).waitFor();
    await log.getByText('2 deliveries, newest first.').waitFor();
    const pending = rows.first();
    const pendingCells = await pending.getByRole('cell').allInnerTexts();
    expect(pendingCells.slice(0, 4)).toEqual(['webhook.test', 'pending', '1', expect.stringMatching(/^500 \(\d+ ms\)$/)]);
    expect(pendingCells[4]).toMatch(/\nnext \S/);
    await pending.getByRole('button', { name: 'Show the answer' }).click();
    await log.getByRole('group', { name: 'The webhook.test delivery' }).locator('pre').getByText('answered 500', { exact: true }).waitFor();
    await shot(page, 'webhooks-pending');

    // filtered by status
    await log.getByLabel('Status').selectOption('pending');
    await log.getByText('1 delivery, newest first.').waitFor();
    expect(await rows.count()).toBe(1);
    expect((await rows.first().getByRole('cell').allInnerTexts())[1]).toBe('pending');

    // Retry, the receiver answering again: delivered, in its second attempt
    receiver.answer = () => 200;
    await rows.first().getByRole('button', { name: 'Retry the webhook.test delivery' }).click();
    await log.getByText(/^Tried again: delivered, answered 200 in \d+ ms\.$/).waitFor();
    await log.getByText('No pending deliveries.').waitFor();
    await log.getByLabel('Status').selectOption('delivered');
    await log.getByText('2 deliveries, newest first.').waitFor();
    // its second attempt (the app's deployment codename is its own: no other test's app, with
    // its own settings and clock, sweeps its deliveries on the shared database)
    expect((await rows.first().getByRole('cell').allInnerTexts()).slice(0, 4)).toEqual(['webhook.test', 'delivered', '2', expect.stringMatching(/^200 \(\d+ ms\)$/)]);
    expect(receiver.to(path)).toHaveLength(3);
    const deliveries = await api(store, owner.accessToken).get(`/auth-api/v1/webhooks/${id}/deliveries`).expect(200);
    expect(deliveries.body.deliveries.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual([
      ['delivered', 2],
      ['delivered', 1],
    ]);

    // topics changed
    await endpoint.getByLabel('user-deleted').check();
    await endpoint.getByRole('button', { name: 'Save' }).click();
    await endpoint.getByText(`Saved in store ${store.codename}.`).waitFor();
    await row.getByRole('cell', { name: 'user-created, audit:user.login.failed, user-deleted' }).waitFor();

    // disabled: said in the list, held by the service
    await endpoint.getByRole('button', { name: 'Disable' }).click();
    await endpoint.getByText('The endpoint was disabled: its events are no longer sent to it.').waitFor();
    await row.getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    await endpoint.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await api(store, owner.accessToken).get(`/auth-api/v1/webhooks/${id}`).expect(200)).body.webhook).toMatchObject({ enabled: false, topics: ['user-created', 'audit:user.login.failed', 'user-deleted'] });
    await shot(page, 'webhooks-disabled');

    // a new secret, shown once, signing what is sent next
    await endpoint.getByRole('button', { name: 'Enable' }).click();
    await endpoint.getByText('The endpoint was enabled.').waitFor();
    await endpoint.getByRole('button', { name: 'Rotate the secret' }).click();
    const again = endpoint.getByRole('status', { name: 'Signing secret' });
    await again.getByText(/has a new signing secret; .* Copy its signing secret now: you will not see it again\./).waitFor();
    const rotated = (await page.getByTestId('webhook-secret').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await again.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByTestId('webhook-secret').waitFor({ state: 'detached' });
    await endpoint.getByRole('button', { name: 'Send a test' }).click();
    await tested.getByText(/^Test sent: delivered/).waitFor();
    const last = receiver.to(path).at(-1)!;
    const lastHeaders = { 'webhook-id': String(last.headers['webhook-id']), 'webhook-timestamp': String(last.headers['webhook-timestamp']), 'webhook-signature': String(last.headers['webhook-signature']) };
    expect(new Webhook(rotated).verify(last.body, lastHeaders)).toMatchObject({ type: 'webhook.test' });

    // answered 410 Gone: the service disables it, and the screen says why
    receiver.answer = () => 410;
    await endpoint.getByRole('button', { name: 'Send a test' }).click();
    await tested.getByText(/^Test sent: failed, answered 410 in \d+ ms\.$/).waitFor();
    await row.getByRole('cell', { name: 'disabled by the service: it answered 410 Gone' }).waitFor();
    await endpoint.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await api(store, owner.accessToken).get(`/auth-api/v1/webhooks/${id}`).expect(200)).body.webhook).toMatchObject({ enabled: false, disabledReason: 'gone' });
    await shot(page, 'webhooks-gone');
    receiver.answer = () => 200;

    // deleted, after a question
    await endpoint.getByRole('button', { name: 'Delete the endpoint' }).click();
    await page.getByText(`The endpoint ${url} was deleted from store ${store.codename}, with its delivery log.`).waitFor();
    await page.getByText('No endpoints.').waitFor();
    await api(store, owner.accessToken).get(`/auth-api/v1/webhooks/${id}`).expect(404);
  }, 90_000);

  it('at 390 px and 1000 px the screen, an endpoint and its delivery log scroll nowhere sideways and cut no button off', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const url = receiver.url(`/layout-${store.codename}/a-rather-long-path-for-the-backend-team`);
    const made = await api(store, owner.accessToken)
      .post('/auth-api/v1/webhooks')
      .send({ url, topics: ['user-created', 'user-updated', 'user-deleted', 'audit:user.login.failed'], description: 'Sync to the customer relationship manager' })
      .expect(201);
    // two deliveries: one with its answer shown, one not
    for (let i = 0; i < 2; i++) await api(store, owner.accessToken).post(`/auth-api/v1/webhooks/${made.body.webhook.id}/test`).expect(200);
    for (const width of [390, 1000]) {
      const page = await newPage(width);
      await signIn(page, store.codename, store.ownerEmail);
      await heading(page, 'Users');
      if (width < 760) await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await heading(page, 'Webhooks');
      await page.getByRole('button', { name: `Open the endpoint ${url}` }).click();
      const log = page.getByRole('region', { name: `Deliveries to ${url}` });
      await log.getByRole('button', { name: 'Show the answer' }).first().click();
      await log.getByRole('group', { name: 'The webhook.test delivery' }).waitFor();
      expect({ width, problems: await layoutProblems(page) }).toEqual({ width, problems: [] });
      await shot(page, `${width}px-webhooks`);
    }
  }, 90_000);
});
