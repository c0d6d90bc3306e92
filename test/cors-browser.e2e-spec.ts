import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CHROMIUM, describeWithChromium, PASSWORD, registerStore, startApp, waitFor, type RegisteredStore, type TestApp } from './helpers.js';

// A real browser engine (headless Chromium) runs a page from one origin that calls the service
// on another: the browser itself enforces CORS, preflights included.

type Report = { loginStatus?: number; tokenHeader?: string | null; requestId?: string | null; meStatus?: number; error?: string };

interface Target {
  apiBase: string;
  store: RegisteredStore;
}

function pageScript({ apiBase, store }: Target): string {
  return `
    const out = {};
    try {
      const login = await fetch(${JSON.stringify(apiBase)} + '/auth-api/login', {
        method: 'POST', credentials: 'include',
        headers: { 'content-type': 'application/json', 'svc-store-codename': ${JSON.stringify(store.codename)} },
        body: JSON.stringify({ username: ${JSON.stringify(store.ownerEmail)}, password: ${JSON.stringify(PASSWORD)} }),
      });
      out.loginStatus = login.status;
      out.tokenHeader = login.headers.get(${JSON.stringify(`svc-access-token-${store.codename}`)});
      out.requestId = login.headers.get('x-request-id');
      const { accessToken } = await login.json();
      const me = await fetch(${JSON.stringify(apiBase)} + '/auth-api/currentuser', { headers: { authorization: 'Bearer ' + accessToken, 'svc-store-codename': ${JSON.stringify(store.codename)} } });
      out.meStatus = me.status;
    } catch (e) { out.error = String(e); }
    await fetch('/report', { method: 'POST', body: JSON.stringify(out) });`;
}

// Serves the page and receives its report; its origin is http://127.0.0.1:<port>. The target
// is read per request: the origins must exist before the app that allows one of them.
async function pageServer(target: Partial<Target>): Promise<{ server: Server; origin: string; reports: Report[] }> {
  const reports: Report[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/report') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => (reports.push(JSON.parse(body) as Report), res.writeHead(204).end()));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><script type="module">${pageScript(target as Target)}</script>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reports };
}

async function browse(url: string, reports: Report[]): Promise<Report> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const browser = spawn(CHROMIUM!, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', `--user-data-dir=${profile}`, '--virtual-time-budget=20000', '--dump-dom', url], { stdio: 'ignore', detached: true });
  try {
    return await waitFor('the page report', () => reports[0], 25_000);
  } finally {
    // Its whole process group: renderer and helper processes write to the profile too.
    const exited = new Promise((resolve) => (browser.exitCode !== null ? resolve(undefined) : browser.once('exit', resolve)));
    try {
      process.kill(-browser.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    await exited;
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

describeWithChromium('CORS seen by a browser (headless Chromium)', () => {
  let t: TestApp;
  const target: Partial<Target> = {};
  let allowed: Awaited<ReturnType<typeof pageServer>>;
  let refused: Awaited<ReturnType<typeof pageServer>>;
  beforeAll(async () => {
    allowed = await pageServer(target);
    refused = await pageServer(target);
    t = await startApp({ settings: { cors: { allowedOrigins: [allowed.origin], credentials: true, exposedHeaders: [], maxAgeSeconds: 600 } } });
    await new Promise<void>((resolve) => t.app.getHttpServer().listen(0, '127.0.0.1', resolve));
    target.store = await registerStore(t.http);
    target.apiBase = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([allowed?.server, refused?.server].filter(Boolean).map((s) => new Promise((r) => s!.close(r))));
    await t?.close();
  });

  it('an allowed page logs in cross-origin, reads the store token header and the request id, and calls a route', async () => {
    const report = await browse(`${allowed.origin}/`, allowed.reports);
    expect(report.error).toBeUndefined();
    expect(report.loginStatus).toBe(200);
    expect(report.tokenHeader).toMatch(/^eyJ/);
    expect(report.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(report.meStatus).toBe(200);
  }, 40_000);

  it('another page is stopped by the browser', async () => {
    const report = await browse(`${refused.origin}/`, refused.reports);
    expect(report.error).toMatch(/TypeError/);
    expect(report.loginStatus).toBeUndefined();
  }, 40_000);
});
