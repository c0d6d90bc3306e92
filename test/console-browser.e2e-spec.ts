import { existsSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { layoutProblems } from './browser-layout.js';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { DataSource } from 'typeorm';
import { ManualClock } from '../src/platform/clock/clock.js';
import { projectPath } from '../src/platform/config/project-path.js';
import { CHROMIUM, describeIf, freePort, login, PASSWORD, registerStore, startApp, SUPER_ADMIN, unique, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';
import { codeAt, TOTP_STEP_MS } from './totp-codes.js';

// The admin console (docs/console.md) in a real browser: Debian's Chromium driven by
// playwright-core, against the service on a real port serving the built console. Each screen
// it passes through is written to test-output/console/ (git-ignored) for a reviewer to look at.

const BUILT = existsSync(projectPath('dist', 'console', 'index.html'));
const SHOTS = projectPath('test-output', 'console');
const describeInBrowser = describeIf(CHROMIUM && BUILT, !CHROMIUM ? 'needs Chromium, none is installed' : 'needs the built console (npm run build)');

describeInBrowser('the admin console in a real browser (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  const clock = new ManualClock();
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await startApp({ clock, settings: { webauthn: { rpId: 'localhost', rpName: 'Console test', origins: [origin] }, userGroupsActive: true } });
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(port, '127.0.0.1', resolve));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP localhost 127.0.0.1'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  // The confirm() questions each page was asked, in order.
  const asked = new WeakMap<Page, string[]>();

  // A page of its own (its own sessionStorage) at a desktop width; confirm() dialogs accepted.
  async function newPage(width = 1000): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 760 } });
    contexts.push(context);
    const page = await context.newPage();
    asked.set(page, []);
    page.on('dialog', (dialog) => {
      asked.get(page)!.push(dialog.message());
      void dialog.accept();
    });
    return page;
  }

  // Each screen in test-output/console/; with UPDATE_DOCS=1 the README's two images too
  // (docs/images/console-*.png: the 1000 px wide window, a few tens of kB).
  async function shot(page: Page, name: string, docsImage?: string): Promise<void> {
    await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
    if (docsImage && process.env.UPDATE_DOCS) {
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: projectPath('docs', 'images', docsImage) });
    }
  }

  async function signIn(page: Page, store: string, username: string, password = PASSWORD, at = origin): Promise<void> {
    await page.goto(`${at}/console/?store=${encodeURIComponent(store)}`);
    await page.getByLabel('Store').selectOption(store);
    await page.getByLabel('Email or mobile').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();
  const as = (store: RegisteredStore, token: string) => ({
    get: (path: string) => t.http.get(path).set('svc-store-codename', store.codename).set('authorization', `Bearer ${token}`),
    post: (path: string) => t.http.post(path).set('svc-store-codename', store.codename).set('authorization', `Bearer ${token}`),
  });

  it('signs in with a password, creates a user and changes its role', async () => {
    const store = await registerStore(t.http);
    const page = await newPage();
    await page.goto(`${origin}/console/`);
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    await shot(page, 'sign-in');

    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    // the owner's row, as a person reads it: name, email, role, active, and its Edit button
    const ownerRow = page.getByRole('row').filter({ hasText: store.ownerEmail });
    await ownerRow.waitFor();
    expect(await ownerRow.getByRole('cell').allInnerTexts()).toEqual(['Store Owner', store.ownerEmail, 'tenantOwner', 'yes', 'Edit']);
    expect(await ownerRow.getByRole('button', { name: `Edit ${store.ownerEmail}` }).isVisible()).toBe(true);
    await page.getByText(`Acting on store ${store.codename}.`).waitFor();

    // a guessable password: the service's advice, in words, not the estimator's score
    await page.getByLabel("New user's email").fill(uniqueEmail());
    await page.getByLabel('Full name').last().fill('Weak Password');
    await page.getByLabel('Initial password').fill('password1');
    await page.getByRole('button', { name: 'Create the user' }).click();
    const weak = page.getByRole('alert').filter({ hasText: /.+/ });
    await weak.waitFor();
    expect(await weak.textContent()).toMatch(/^The password is too easy to guess\. .*[A-Z].*\.$/);
    expect(await weak.textContent()).not.toMatch(/score|required/);

    const email = uniqueEmail();
    await page.getByLabel("New user's email").fill(email);
    await page.getByLabel('Full name').last().fill('Ada Lovelace');
    await page.getByLabel('Initial password').fill(PASSWORD);
    await page.getByLabel('Role').selectOption('tenantUser');
    await page.getByRole('button', { name: 'Create the user' }).click();
    await page.getByText(`${email} was created in store ${store.codename}.`).waitFor();
    await page.getByRole('cell', { name: email, exact: true }).waitFor();

    await page.getByRole('button', { name: `Edit ${email}` }).click();
    const edit = page.getByRole('region', { name: `Edit ${email}` });
    await edit.getByLabel('Role').selectOption('tenantAdmin');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.getByText(`Saved in store ${store.codename}.`).waitFor();
    await page.getByRole('row').filter({ hasText: email }).getByRole('cell', { name: 'tenantAdmin' }).waitFor();
    await shot(page, 'users', 'console-users.png');

    // what the service holds
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const users = await as(store, owner.accessToken).get('/auth-api/v1/users').expect(200);
    expect(users.body.users.find((u: { email: string }) => u.email === email)).toMatchObject({ fullname: 'Ada Lovelace', roleId: 'tenantAdmin', isActive: true });

    // at phone width: the menu opens the navigation
    const phone = await newPage(390);
    await signIn(phone, store.codename, store.ownerEmail);
    await heading(phone, 'Users');
    await phone.getByRole('button', { name: 'Menu' }).click();
    await phone.getByRole('link', { name: 'API keys' }).click();
    await heading(phone, 'API keys');
    await shot(phone, 'phone-api-keys');
  }, 60_000);

  it('creates an API key (shown once), then deletes it', async () => {
    const store = await registerStore(t.http);
    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'API keys' }).click();
    await heading(page, 'API keys');
    await page.getByLabel('Key name').fill('Billing export');
    await page.getByRole('button', { name: 'Create' }).click();
    const key = await page.getByTestId('new-api-key').textContent();
    expect(key).toMatch(/^sk_svc_/);
    await page.getByText(`The key Billing export of store ${store.codename}, acting for you as tenantOwner: copy it now`).waitFor();
    await page.getByRole('cell', { name: 'Billing export', exact: true }).waitFor();
    await shot(page, 'api-keys');
    // the key works
    await t.http.get('/auth-api/currentuser').set('svc-store-codename', store.codename).set('authorization', `Bearer ${key}`).expect(200);

    await page.getByRole('button', { name: 'Delete the key Billing export' }).click();
    await page.getByText(`The key Billing export was deleted from store ${store.codename}.`).waitFor();
    await page.getByText('No keys.').waitFor();
    await t.http.get('/auth-api/currentuser').set('svc-store-codename', store.codename).set('authorization', `Bearer ${key}`).expect(401);
  }, 60_000);

  it("ends another of the admin's sessions", async () => {
    const store = await registerStore(t.http);
    const other = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'Sessions' }).click();
    await heading(page, 'Sessions');
    const list = page.getByRole('list', { name: 'Your sessions' });
    await list.getByRole('listitem').nth(1).waitFor();
    await shot(page, 'sessions');
    await list.getByRole('button', { name: /^End the session/ }).click();
    await page.getByText('The session was ended.').waitFor();
    await list.getByRole('listitem').nth(1).waitFor({ state: 'detached' });
    await as(store, other.accessToken).get('/auth-api/currentuser').expect(401);
  }, 60_000);

  it('filters the audit log, and follows new entries live', async () => {
    const store = await registerStore(t.http);
    await t.http.post('/auth-api/login').set('svc-store-codename', store.codename).send({ username: store.ownerEmail, password: 'not the password' }).expect(401);
    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await heading(page, 'Audit log');
    const entries = page.getByRole('region', { name: 'Entries' });
    // the refused login is in the log before the page opens (entries are written every 200 ms;
    // the console's own sign-in may not be yet)
    await entries.getByText('store.created').waitFor();
    await page.getByLabel('Action (exact, or a prefix like user.login.*)').fill('user.login.*');
    await page.getByLabel('Outcome').selectOption('failure');
    await page.getByRole('button', { name: 'Apply' }).click();
    await entries.getByText('1 entry', { exact: true }).waitFor();
    await entries.getByText('user.login.failed').waitFor();
    expect(await entries.getByText('user.login.succeeded').count()).toBe(0);

    // live: a new refused login appears without a reload; a successful one does not (filtered)
    await page.getByLabel('Follow new entries live').check();
    await page.getByText('Following new entries.').waitFor();
    await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    await t.http.post('/auth-api/login').set('svc-store-codename', store.codename).send({ username: store.ownerEmail, password: 'still not it' }).expect(401);
    await entries.getByText('user.login.failed').nth(1).waitFor();
    await entries.getByText('1 entry (+1 live)').waitFor();
    expect(await entries.getByText('user.login.succeeded').count()).toBe(0);
    await shot(page, 'audit', 'console-audit.png');
  }, 60_000);

  it('signs in with an authenticator app code', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const setup = await as(store, owner.accessToken).post('/auth-api/mfa/totp/setup').expect(200);
    await as(store, owner.accessToken).post('/auth-api/mfa/totp/confirm').send({ code: codeAt(setup.body.secret, clock) }).expect(200);
    clock.advance(2 * TOTP_STEP_MS); // the confirming code is spent: the next step's is fresh

    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await page.getByRole('heading', { name: 'Authenticator app' }).waitFor();
    await page.getByLabel('Code from the app').fill('000000' === codeAt(setup.body.secret, clock) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('alert').filter({ hasText: /.+/ }).waitFor();
    await shot(page, 'sign-in-totp');
    await page.getByLabel('Code from the app').fill(codeAt(setup.body.secret, clock));
    await page.getByRole('button', { name: 'Continue' }).click();
    await heading(page, 'Users');
  }, 60_000);

  it('enrols a passkey through the console, then signs in with it (CDP virtual authenticator)', async () => {
    const store = await registerStore(t.http);
    const page = await newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'My security' }).click();
    await heading(page, 'My security');
    await page.getByLabel('Passkey name').fill('Test laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Passkey added.').waitFor();
    await page.getByText('Passkeys: 1.').waitFor();
    // listed, and renamed
    const mine = page.getByRole('list', { name: 'Your passkeys' });
    await mine.getByText('Test laptop').waitFor();
    await mine.getByRole('button', { name: 'Rename the passkey Test laptop' }).click();
    await mine.getByLabel('New name').fill('Work laptop');
    await mine.getByRole('button', { name: 'Save' }).click();
    await mine.getByText('Work laptop').waitFor();
    await shot(page, 'security');
    const passkeys = async () => (await t.app.get(DataSource).query('SELECT "name" FROM "passkeys" WHERE "userId" = $1', [store.ownerId])) as { name: string }[];
    expect((await passkeys()).map((p) => p.name)).toEqual(['Work laptop']);
    // a password alone no longer signs in: the passkey is asked after it
    expect((await login(t.http, store.ownerEmail, PASSWORD, store.codename)).body.sessionNeedsPasskey2FA).toBe(true);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    await signIn(page, store.codename, store.ownerEmail);
    await page.getByRole('heading', { name: 'Passkey' }).waitFor();
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await heading(page, 'Users');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    await page.goto(`${origin}/console/?store=${store.codename}`);
    await page.getByLabel('Store').selectOption(store.codename);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await heading(page, 'Users');
    await page.getByRole('cell', { name: store.ownerEmail, exact: true }).waitFor();

    // deleted, after a question: it signs in no more
    await page.getByRole('link', { name: 'My security' }).click();
    await heading(page, 'My security');
    await page.getByRole('button', { name: 'Delete the passkey Work laptop' }).click();
    await page.getByText('No passkey yet.').waitFor();
    await page.getByText('Passkeys: 0.').waitFor();
    expect(asked.get(page)!.at(-1)).toBe('Delete the passkey Work laptop? It no longer signs you in.');
    expect(await passkeys()).toEqual([]);
  }, 60_000);

  it('tells a tenantUser that the console is for administrators', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const email = uniqueEmail();
    await as(store, owner.accessToken).post('/auth-api/users').send({ email, password: PASSWORD, fullname: 'Plain User', roleId: 'tenantUser' }).expect(201);
    const page = await newPage();
    await signIn(page, store.codename, email);
    await page.getByRole('heading', { name: 'This console is for administrators' }).waitFor();
    await shot(page, 'not-an-administrator');
    // a deep link shows the same, and no screen
    await page.goto(`${origin}/console/apikeys`);
    await page.getByRole('heading', { name: 'This console is for administrators' }).waitFor();
    expect(await page.getByRole('heading', { name: 'API keys' }).count()).toBe(0);
  }, 60_000);

  it("a store's administrator pointed at another store's data gets the API's refusal as a sentence", async () => {
    const mine = await registerStore(t.http);
    const theirs = await registerStore(t.http);
    const page = await newPage();
    // signing in to the other store with this store's credentials
    await signIn(page, theirs.codename, mine.ownerEmail);
    await page.getByRole('alert').filter({ hasText: /.+/ }).waitFor();
    const refused = await page.getByRole('alert').filter({ hasText: /.+/ }).textContent();
    expect(refused).not.toMatch(/[{}]/);
    // signed in to its own store, its session made to target the other one (as a forged
    // sessionStorage would): the API refuses every call, and the console says why
    await signIn(page, mine.codename, mine.ownerEmail);
    await heading(page, 'Users');
    await page.evaluate((other) => {
      // runs in the page (the test's tsconfig has no DOM types)
      const storage = (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null; setItem(k: string, v: string): void } }).sessionStorage;
      const s = JSON.parse(storage.getItem('console.session')!);
      storage.setItem('console.session', JSON.stringify({ ...s, target: other }));
    }, theirs.codename);
    await page.reload();
    await heading(page, 'Users');
    const alert = page.getByRole('alert').filter({ hasText: /.+/ });
    await alert.waitFor();
    const text = (await alert.textContent())!;
    // TenantMismatch's detail, as the API wrote it
    expect(text).toMatch(/issued for store "[^"]+" but the request targets store/);
    expect(text).not.toMatch(/[{}]|errMsg_/);
    expect(await page.getByRole('cell', { name: theirs.ownerEmail, exact: true }).count()).toBe(0);
    await shot(page, 'other-store-refused');
  }, 60_000);
  it('searches users, edits the store, and shows the overview from the audit log', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const named = uniqueEmail();
    await t.http.post('/auth-api/users').set('svc-store-codename', store.codename).set('authorization', `Bearer ${owner.accessToken}`).send({ email: named, password: PASSWORD, fullname: 'Grace Hopper' }).expect(201);
    await t.http.post('/auth-api/login').set('svc-store-codename', store.codename).send({ username: named, password: 'not the password' }).expect(401);
    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');

    await page.getByLabel('Search by email, mobile or name').fill('hopper');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    // Both users are listed before the search; after it, only the one whose name matches.
    await page.getByRole('cell', { name: store.ownerEmail, exact: true }).waitFor({ state: 'detached' });
    await page.getByRole('cell', { name: named, exact: true }).waitFor();
    await shot(page, 'users-search');

    await page.getByRole('link', { name: 'Store' }).click();
    await heading(page, 'Store');
    await page.getByLabel('Full name').fill('Renamed in the console');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved: store ${store.codename}.`).waitFor();
    await shot(page, 'store');
    const record = await as(store, owner.accessToken).get('/auth-api/v1/store').expect(200);
    expect(record.body.store).toMatchObject({ codename: store.codename, fullname: 'Renamed in the console' });
    // A store's own administrator is not offered the activation switch (SaaS administrators only).
    expect(await page.getByLabel('Active (its users may sign in)').count()).toBe(0);

    await t.app.get(AuditRecorderService).flush();
    await page.getByRole('link', { name: 'Overview' }).click();
    await heading(page, 'Overview');
    await page.getByText('users', { exact: false }).first().waitFor();
    const stats = await page.locator('.stats').innerText();
    expect(stats).toMatch(/2\s*users/);
    expect(stats).toMatch(/\d+\s*active sessions/);
    // The sign-in table for screen readers holds the series: at least the owner's sign-in and the refused one.
    const table = await page.locator('figure table').first().innerText();
    const [succeeded, failed] = table
      .split('\n')
      .slice(1)
      .map((row) => row.split('\t').slice(1).map(Number))
      .reduce(([s, f], [a, b]) => [s + (a || 0), f + (b || 0)], [0, 0]);
    expect(succeeded).toBeGreaterThanOrEqual(1);
    expect(failed).toBeGreaterThanOrEqual(1);
    // Each chart has its axes: the scale's top both ways on the y axis, the hours (every third)
    // and the days on the x axis, the current period last.
    const overview = (await as(store, owner.accessToken).get('/auth-api/v1/overview').expect(200)).body;
    const [hours, days] = await page.locator('figure .x-axis').evaluateAll((axes) => axes.map((a) => (a as unknown as { innerText: string }).innerText.split('\n').filter(Boolean)));
    expect(hours).toHaveLength(8);
    for (const label of hours) expect(label).toMatch(/^\d\d:00$/);
    expect(hours.at(-1)).toBe(`${String(new Date(overview.signIns.last24h.at(-1).from).getHours()).padStart(2, '0')}:00`);
    expect(days).toHaveLength(7);
    expect(days.at(-1)).toContain(String(new Date(overview.signIns.last7d.at(-1).from).getUTCDate()));
    const top = (buckets: { succeeded: number; failed: number }[]) => String(Math.max(1, ...buckets.map((b) => Math.max(b.succeeded, b.failed))));
    const yAxes = await page.locator('figure .y-axis').evaluateAll((axes) => axes.map((a) => (a as unknown as { innerText: string }).innerText.split('\n')));
    expect(yAxes).toEqual([
      [top(overview.signIns.last24h), '0', top(overview.signIns.last24h)],
      [top(overview.signIns.last7d), '0', top(overview.signIns.last7d)],
    ]);
    await shot(page, 'overview');

    // one user and one session are not "1 users"
    const lone = await registerStore(t.http);
    const own = await newPage();
    await signIn(own, lone.codename, lone.ownerEmail);
    await heading(own, 'Users');
    await own.getByRole('link', { name: 'Overview' }).click();
    await heading(own, 'Overview');
    await own.locator('.stats').waitFor();
    expect((await own.locator('.stats').innerText()).split('\n').filter(Boolean)).toEqual(['1', 'user', '1', 'active session']);
  }, 60_000);

  it('works from the keyboard alone, and its text and controls keep WCAG AA contrast', async () => {
    const store = await registerStore(t.http);
    const page = await newPage();
    await page.goto(`${origin}/console/?store=${encodeURIComponent(store.codename)}`);
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    // Tab to each field of the form, type, and press Enter: no mouse.
    const focusOn = async (name: string) => {
      for (let i = 0; i < 20; i++) {
        if (await page.evaluate((n) => (globalThis as any).document.activeElement?.getAttribute('aria-label') === n || (globalThis as any).document.activeElement?.labels?.[0]?.textContent?.trim() === n, name)) return;
        await page.keyboard.press('Tab');
      }
      throw new Error(`Tab never reached ${name}`);
    };
    await focusOn('Email or mobile');
    await page.keyboard.type(store.ownerEmail);
    await focusOn('Password');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await heading(page, 'Users');
    // The skip link is the first stop and moves focus to the main content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent?.trim())).toMatch(/skip/i);
    // A navigation link is reached by Tab and followed with Enter.
    for (let i = 0; i < 30 && (await page.evaluate(() => (globalThis as any).document.activeElement?.textContent?.trim())) !== 'API keys'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await heading(page, 'API keys');
    // Every visible text and control: the contrast of its colour against the background it sits on.
    // (in the page: the browser's globals, untyped here)
    const worst: { ratio: number; what: string } = await page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as any;
      const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
      const lum = ([r, g, b]: number[]) => {
        const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
      };
      const background = (el: any): number[] => {
        for (let e = el; e; e = e.parentElement) {
          const c = rgb(getComputedStyle(e).backgroundColor);
          if (c.length < 4 || c[3] > 0) return c.slice(0, 3);
        }
        return [255, 255, 255];
      };
      let min = { ratio: 21, what: '' };
      for (const el of Array.from(document.querySelectorAll('body *')) as any[]) {
        const style = getComputedStyle(el);
        const box = el.getBoundingClientRect();
        if (!box.width || !box.height || style.visibility === 'hidden' || el.closest('.sr-only')) continue;
        const text = (Array.from(el.childNodes) as any[]).some((n) => n.nodeType === 3 && n.textContent.trim());
        if (!text && !['INPUT', 'SELECT', 'BUTTON', 'TEXTAREA'].includes(el.tagName)) continue;
        const [a, b] = [lum(rgb(style.color)), lum(background(el))].sort((x, y) => y - x);
        const ratio = (a + 0.05) / (b + 0.05);
        if (ratio < min.ratio) min = { ratio, what: `${el.tagName}.${el.className} "${(el.textContent ?? '').trim().slice(0, 30)}"` };
      }
      return min;
    });
    // On failure the answer names the element with the lowest contrast.
    expect(worst.ratio >= 4.5 ? 'AA' : worst).toBe('AA');
  }, 60_000);

  it('a SaaS administrator signs in at the root and looks at a store', async () => {
    const store = await registerStore(t.http);
    const page = await newPage();
    await signIn(page, '', SUPER_ADMIN.username, SUPER_ADMIN.password);
    await heading(page, 'Users');
    await page.getByRole('cell', { name: SUPER_ADMIN.username, exact: true }).waitFor();
    await page.getByLabel('Store codename (empty: root)').fill(store.codename);
    await page.getByRole('button', { name: 'Look at this store' }).click();
    await page.getByRole('banner').getByText(`store ${store.codename}`, { exact: true }).waitFor();
    await page.getByRole('cell', { name: store.ownerEmail, exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: SUPER_ADMIN.username, exact: true }).count()).toBe(0);
    await shot(page, 'saas-admin-store');
  }, 60_000);

  it('walks an owner whose role requires a second factor through its enrolment', async () => {
    const enrolClock = new ManualClock();
    const strict = await startApp({ clock: enrolClock, settings: { mfaRequiredForRoles: ['tenantOwner'] } });
    try {
      const port = await freePort();
      await new Promise<void>((resolve) => strict.app.getHttpServer().listen(port, '127.0.0.1', resolve));
      const store = await registerStore(strict.http);
      const page = await newPage();
      await signIn(page, store.codename, store.ownerEmail, PASSWORD, `http://localhost:${port}`);
      await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const secret = (await page.getByTestId('totp-secret').textContent())!;
      await page.getByRole('img', { name: "QR code of the authenticator app's secret" }).waitFor();
      await shot(page, 'enrolment');
      await page.getByLabel('Code from the app').fill(codeAt(secret, enrolClock));
      await page.getByRole('button', { name: 'Turn it on' }).click();
      await page.getByRole('button', { name: 'I have kept them' }).waitFor();
      expect(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);
      await page.getByRole('button', { name: 'I have kept them' }).click();
      await heading(page, 'Users');
      await page.getByRole('cell', { name: store.ownerEmail, exact: true }).waitFor();
    } finally {
      await strict.close();
    }
  }, 60_000);
  it('manages access: a group with a member, a grant to a role, and what the admin may do', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const email = uniqueEmail();
    await as(store, owner.accessToken).post('/auth-api/users').send({ email, password: PASSWORD, fullname: 'Group Member', roleId: 'tenantUser' }).expect(201);
    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'Access' }).click();
    await heading(page, 'Access');
    await page.getByLabel("New group's name").fill('Support');
    await page.getByRole('button', { name: 'Create the group' }).click();
    const group = page.getByRole('list', { name: 'Groups' }).getByRole('listitem').filter({ hasText: 'Support' }).first();
    await group.getByRole('button', { name: 'Members' }).click();
    await group.getByLabel('User to add').selectOption({ label: email });
    await group.getByRole('button', { name: 'Add' }).click();
    await page.getByRole('list', { name: 'Members of Support' }).getByText(email).waitFor();

    // the permission is picked from the names the service knows, not typed
    const permission = page.getByLabel('Permission', { exact: true });
    expect(await permission.evaluate((el) => el.tagName)).toBe('SELECT');
    const names = await permission.locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(names).toEqual(expect.arrayContaining(['users.read', 'auditLog.read', 'apikeys.create']));
    expect(names).not.toContain('user.read');
    await permission.selectOption('auditLog.read');
    await page.getByLabel('Which').selectOption('tenantAdmin');
    await page.getByRole('button', { name: 'Add the grant' }).click();
    await page.getByText(`The grant of auditLog.read was added in store ${store.codename}.`).waitFor();
    await page.getByRole('cell', { name: 'role tenantAdmin' }).waitFor();
    await page.getByRole('region', { name: 'What you may do here' }).getByText('auditLog.read').waitFor();
    await shot(page, 'access');
    const grants = await as(store, owner.accessToken).get('/auth-api/v1/permissiongrants').expect(200);
    expect(grants.body.permissionGrants).toEqual([expect.objectContaining({ permission: 'auditLog.read', roleId: 'tenantAdmin', canDo: true })]);
  }, 60_000);

  it('watches live events arrive', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'Live events' }).click();
    await heading(page, 'Live events');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText(/^Listening to .*userCreated/).waitFor();
    const email = uniqueEmail();
    await as(store, owner.accessToken).post('/auth-api/users').send({ email, password: PASSWORD, fullname: 'New Arrival', roleId: 'tenantUser' }).expect(201);
    const events = page.getByRole('list', { name: 'Events' });
    await events.getByText('userCreated').first().waitFor();
    await shot(page, 'live-events');
  }, 60_000);
  it('with short access tokens, refreshes once on a 401 and carries on', async () => {
    const refreshClock = new ManualClock();
    const short = await startApp({ clock: refreshClock, settings: { accessTokenMinutes: 5 } });
    try {
      const port = await freePort();
      await new Promise<void>((resolve) => short.app.getHttpServer().listen(port, '127.0.0.1', resolve));
      const store = await registerStore(short.http);
      const page = await newPage();
      const refreshes: number[] = [];
      page.on('response', (r) => r.url().endsWith('/auth-api/refresh') && refreshes.push(r.status()));
      await signIn(page, store.codename, store.ownerEmail, PASSWORD, `http://localhost:${port}`);
      await heading(page, 'Users');
      refreshClock.advance(6 * 60_000); // the access token has expired, the session has not
      await page.getByRole('link', { name: 'API keys' }).click();
      await heading(page, 'API keys');
      await page.getByText('No keys.').waitFor();
      expect(refreshes).toEqual([200]);
      expect(await page.getByRole('alert').filter({ hasText: /.+/ }).count()).toBe(0);
    } finally {
      await short.close();
    }
  }, 60_000);

  it('a SaaS administrator looking at a store: every write screen acts on that store, and says which', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const asOwner = as(store, owner.accessToken);
    // the store before: a member signed in, a key its owner made
    const memberEmail = uniqueEmail();
    const memberId: string = (await asOwner.post('/auth-api/users').send({ email: memberEmail, password: PASSWORD, fullname: 'Member', roleId: 'tenantUser' }).expect(201)).body.user.id;
    const member = await login(t.http, memberEmail, PASSWORD, store.codename);
    const ownersKey: string = (await asOwner.post('/auth-api/v1/apikeys').send({ name: 'Owner job' }).expect(201)).body.apiKey.key;
    const page = await newPage();
    await signIn(page, '', SUPER_ADMIN.username, SUPER_ADMIN.password);
    await heading(page, 'Users');
    await page.getByText('Acting on the root store.').waitFor();
    await page.getByLabel('Store codename (empty: root)').fill(store.codename);
    await page.getByRole('button', { name: 'Look at this store' }).click();
    await page.getByText(`Acting on store ${store.codename}.`).waitFor();

    // Users: create, change, end a user's sessions, delete
    const email = uniqueEmail();
    await page.getByLabel("New user's email").fill(email);
    await page.getByLabel('Full name').last().fill('Made From The Root');
    await page.getByLabel('Initial password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create the user' }).click();
    await page.getByText(`${email} was created in store ${store.codename}.`).waitFor();
    await page.getByRole('button', { name: `Edit ${email}` }).click();
    const edit = page.getByRole('region', { name: `Edit ${email}` });
    await edit.getByLabel('Role').selectOption('tenantAdmin');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.getByText(`Saved in store ${store.codename}.`).waitFor();
    const users = async () => (await asOwner.get('/auth-api/v1/users').expect(200)).body.users as { email: string; roleId: string }[];
    expect((await users()).find((u) => u.email === email)).toMatchObject({ roleId: 'tenantAdmin' });
    await edit.getByRole('button', { name: 'Delete the user' }).click();
    await page.getByText(`${email} was deleted from store ${store.codename}.`).waitFor();
    expect(asked.get(page)!.at(-1)).toMatch(new RegExp(`^Delete ${email} from store ${store.codename}\\?`));
    expect((await users()).map((u) => u.email)).not.toContain(email);
    await page.getByRole('button', { name: `Edit ${memberEmail}` }).click();
    const memberEdit = page.getByRole('region', { name: `Edit ${memberEmail}` });
    await memberEdit.getByRole('button', { name: 'End its sessions' }).click();
    await memberEdit.getByText(`1 session ended, in store ${store.codename}.`).waitFor();
    await as(store, member.accessToken).get('/auth-api/currentuser').expect(401);
    // nothing of it at the root
    const admin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    expect((await t.http.get('/auth-api/v1/users').query({ search: email }).set('authorization', `Bearer ${admin.accessToken}`).expect(200)).body.users).toEqual([]);

    // API keys: the store's, deleted there; none made from the root (a key acts for a user of its store)
    await page.getByRole('link', { name: 'API keys' }).click();
    await heading(page, 'API keys');
    const keys = page.getByRole('region', { name: `Keys of store ${store.codename}` });
    await keys.getByRole('cell', { name: 'Owner job', exact: true }).waitFor();
    await page.getByText(`you are not a user of store ${store.codename}`).waitFor();
    expect(await page.getByLabel('Key name').count()).toBe(0);
    await keys.getByRole('button', { name: 'Delete the key Owner job' }).click();
    await page.getByText(`The key Owner job was deleted from store ${store.codename}.`).waitFor();
    await t.http.get('/auth-api/currentuser').set('authorization', `Bearer ${ownersKey}`).expect(401);
    expect((await asOwner.get('/auth-api/v1/apikeys').expect(200)).body.apiKeys).toEqual([]);

    // Access: a group, a member, a grant
    await page.getByRole('link', { name: 'Access' }).click();
    await heading(page, 'Access');
    const group = unique('Ops ');
    await page.getByLabel("New group's name").fill(group);
    await page.getByRole('button', { name: 'Create the group' }).click();
    await page.getByText(`The group ${group} was created in store ${store.codename}.`).waitFor();
    const item = page.getByRole('list', { name: 'Groups' }).getByRole('listitem').filter({ hasText: group }).first();
    await item.getByRole('button', { name: 'Members' }).click();
    await item.getByLabel('User to add').selectOption({ label: memberEmail });
    await item.getByRole('button', { name: 'Add' }).click();
    await page.getByText(`${memberEmail} joined ${group} in store ${store.codename}.`).waitFor();
    await page.getByLabel('Permission', { exact: true }).selectOption('overview.read');
    await page.getByLabel('Which').selectOption('tenantUser');
    await page.getByRole('button', { name: 'Add the grant' }).click();
    await page.getByText(`The grant of overview.read was added in store ${store.codename}.`).waitFor();
    const groups = (await asOwner.get('/auth-api/v1/usergroups').expect(200)).body.userGroups as { id: string; groupName: string; storeId: string | null }[];
    const made = groups.filter((g) => g.groupName === group);
    expect(made).toEqual([expect.objectContaining({ storeId: store.storeId })]);
    const members = (await asOwner.get('/auth-api/v1/usergroupmembers').query({ groupId: made[0].id }).expect(200)).body.userGroupMembers;
    expect(members).toEqual([expect.objectContaining({ userId: memberId })]);
    const grants = (await asOwner.get('/auth-api/v1/permissiongrants').expect(200)).body.permissionGrants;
    expect(grants).toEqual(expect.arrayContaining([expect.objectContaining({ permission: 'overview.read', roleId: 'tenantUser', storeId: store.storeId })]));

    // Store: its record; a SaaS administrator may deactivate it
    await page.getByRole('link', { name: 'Store' }).click();
    await heading(page, 'Store');
    await page.getByLabel('Full name').fill('Renamed from the root');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved: store ${store.codename}.`).waitFor();
    expect((await asOwner.get('/auth-api/v1/store').expect(200)).body.store.fullname).toBe('Renamed from the root');
    expect(await page.getByLabel('Active (its users may sign in)').count()).toBe(1);
    await shot(page, 'saas-admin-store-record');

    // the administrator's own sessions and factors stay its own, and say so
    for (const screen of ['Sessions', 'My security']) {
      await page.getByRole('link', { name: screen }).click();
      await heading(page, screen);
      await page.getByText('Your own, in the root store where you signed in, whichever store you look at.').waitFor();
    }

    // the root store's record offers no switch it could never turn (RootStoreAlwaysActive)
    await page.getByLabel('Store codename (empty: root)').fill('');
    await page.getByRole('button', { name: 'Look at this store' }).click();
    await page.getByRole('link', { name: 'Store' }).click();
    await page.getByRole('region', { name: 'Store root' }).waitFor();
    await page.getByText('Acting on the root store.').waitFor();
    expect(await page.getByLabel('Active (its users may sign in)').count()).toBe(0);
  }, 90_000);

  it("shows switched-off features as off, with their settings key, and offers none of their actions", async () => {
    // the shipped settings: user groups and passkeys off
    const plain = await startApp();
    try {
      const port = await freePort();
      await new Promise<void>((resolve) => plain.app.getHttpServer().listen(port, '127.0.0.1', resolve));
      const store = await registerStore(plain.http);
      const page = await newPage();
      const alerts = () => page.getByRole('alert').filter({ hasText: /.+/ }).count();
      await page.goto(`http://localhost:${port}/console/?store=${store.codename}`);
      await page.getByLabel('Store').selectOption(store.codename);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByText("Passkeys are off in this service's settings (webauthn).").waitFor();
      expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).count()).toBe(0);
      expect(await alerts()).toBe(0);
      await page.getByLabel('Email or mobile').fill(store.ownerEmail);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await heading(page, 'Users');

      await page.getByRole('link', { name: 'Access' }).click();
      await heading(page, 'Access');
      await page.getByRole('region', { name: 'User groups' }).getByText("User groups are off in this service's settings (userGroupsActive).").waitFor();
      await page.getByRole('region', { name: 'What you may do here' }).getByText('users.read').waitFor();
      expect(await page.getByRole('button', { name: 'Create the group' }).count()).toBe(0);
      expect(await page.getByLabel('Granted to').locator('option').allInnerTexts()).toEqual(['A role', 'A user', 'The whole store']);
      expect(await alerts()).toBe(0);
      await shot(page, 'access-groups-off');

      await page.getByRole('link', { name: 'My security' }).click();
      await heading(page, 'My security');
      await page.getByText("Passkeys are off in this service's settings (webauthn).").waitFor();
      await page.getByText(/^Authenticator app: off\./).waitFor();
      expect(await page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
      expect(await alerts()).toBe(0);
      await shot(page, 'security-passkeys-off');
    } finally {
      await plain.close();
    }
  }, 60_000);

  it('names the users of audit entries, and links them to the Users screen', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const email = uniqueEmail();
    const made = await as(store, owner.accessToken).post('/auth-api/users').send({ email, password: PASSWORD, fullname: 'Linked Person', roleId: 'tenantUser' }).expect(201);
    await t.app.get(AuditRecorderService).flush();
    const page = await newPage();
    await signIn(page, store.codename, store.ownerEmail);
    await heading(page, 'Users');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await heading(page, 'Audit log');
    await page.getByLabel('Action (exact, or a prefix like user.login.*)').fill('user.created');
    await page.getByRole('button', { name: 'Apply' }).click();
    const row = page.getByRole('region', { name: 'Entries' }).getByRole('row').filter({ hasText: email });
    await row.getByRole('link', { name: email }).waitFor();
    // who did it and to whom, by name; no raw id in sight
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(1, 5)).toEqual(['user.created', 'success', `${store.ownerEmail} (tenantOwner)`, email]);
    expect(cells.join(' ')).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}|[0-9a-f]{8}…/);
    await shot(page, 'audit-names');
    await row.getByRole('link', { name: email }).click();
    await heading(page, 'Users');
    await page.getByRole('region', { name: `Edit ${email}` }).waitFor();
    expect(new URL(page.url()).search).toBe(`?user=${made.body.user.id}`);
  }, 60_000);

  it('at 390 px, 768 px and 1000 px nothing scrolls sideways and no button or link is cut off; the Users table keeps Edit in sight', async () => {
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const asOwner = as(store, owner.accessToken);
    // every screen with rows in it: users, a key, a group and a grant, audit entries
    const email = `${unique('a-rather-long-address-')}@example.com`;
    await asOwner.post('/auth-api/users').send({ email, password: PASSWORD, fullname: 'Bartholomew Longname-Example', roleId: 'tenantAdmin' }).expect(201);
    await asOwner.post('/auth-api/v1/apikeys').send({ name: 'Nightly export to the warehouse' }).expect(201);
    await asOwner.post('/auth-api/v1/usergroups').send({ groupName: 'Support' }).expect(201);
    await asOwner.post('/auth-api/v1/permissiongrants').send({ permission: 'auditLog.read', roleId: 'tenantAdmin', canDo: true }).expect(201);
    await t.app.get(AuditRecorderService).flush();
    const screens: [string, (page: Page) => Promise<void>][] = [
      ['Overview', (page) => page.locator('.stats').waitFor()],
      ['Sessions', (page) => page.getByRole('list', { name: 'Your sessions' }).getByRole('listitem').first().waitFor()],
      ['API keys', (page) => page.getByRole('cell', { name: 'Nightly export to the warehouse', exact: true }).waitFor()],
      ['Access', (page) => page.getByRole('cell', { name: 'role tenantAdmin' }).waitFor()],
      ['Audit log', (page) => page.getByRole('region', { name: 'Entries' }).getByText('apikey.created').waitFor()],
      ['Live events', (page) => page.getByRole('button', { name: 'Start' }).waitFor()],
      ['Store', (page) => page.getByRole('region', { name: `Store ${store.codename}` }).waitFor()],
      ['My security', (page) => page.getByText(/^Authenticator app: off\./).waitFor()],
    ];
    for (const width of [390, 768, 1000]) {
      const page = await newPage(width);
      await signIn(page, store.codename, store.ownerEmail);
      await heading(page, 'Users');
      const editButton = page.getByRole('button', { name: `Edit ${email}` });
      await editButton.waitFor();
      const box = (await editButton.boundingBox())!;
      expect({ width, left: box.x >= 0, right: box.x + box.width <= width, visible: await editButton.isVisible() }).toEqual({ width, left: true, right: true, visible: true });
      await editButton.click();
      await page.getByRole('region', { name: `Edit ${email}` }).waitFor();
      expect({ width, screen: 'Users', problems: await layoutProblems(page) }).toEqual({ width, screen: 'Users', problems: [] });
      await shot(page, `${width}px-users`);
      for (const [screen, loaded] of screens) {
        if (width < 760) await page.getByRole('button', { name: 'Menu' }).click();
        await page.getByRole('link', { name: screen, exact: true }).click();
        await heading(page, screen);
        await loaded(page);
        expect({ width, screen, problems: await layoutProblems(page) }).toEqual({ width, screen, problems: [] });
        await shot(page, `${width}px-${screen.toLowerCase().replace(/ /g, '-')}`);
      }
    }
  }, 90_000);
});
