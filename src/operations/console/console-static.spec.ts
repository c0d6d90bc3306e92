import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import '../../errors.js';
import { CONSOLE_CSP, consoleStatic } from './console-static.js';

// The console's files as the service serves them, from a folder built by hand.
describe('consoleStatic', () => {
  let dir: string;
  const INDEX = '<!doctype html><head><title>Admin console</title></head><script type="module" src="/console/assets/index-abc123.js"></script>';
  // The page names the project (the store header is `<project>-store-codename`).
  const SERVED = INDEX.replace('</head>', '<meta name="console-project" content="svc"></head>');
  const SCRIPT = 'console.log("hi");'.repeat(200);

  function appFor(settings: { enabled: boolean; path: string }, from = dir) {
    const logged: string[] = [];
    const app = express();
    const files = consoleStatic(settings, from, 'svc', (m) => logged.push(m));
    if (files) app.use(files.handle);
    app.use((_req, res) => void res.status(404).json({ errCode: 'RouteNotFound' }));
    return { http: request(app), logged, mounted: !!files, served: files?.served };
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), SCRIPT);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('hashed assets are cached for a year; index.html revalidates and carries the CSP', async () => {
    const { http } = appFor({ enabled: true, path: '/console' });
    const js = await http.get('/console/assets/index-abc123.js').expect(200);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.text).toBe(SCRIPT);
    const html = await http.get('/console/').expect(200);
    expect(html.headers['cache-control']).toBe('no-cache');
    expect(html.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(html.text).toBe(SERVED);
    await http.get('/console/').set('If-None-Match', html.headers.etag!).expect(304);
  });

  it("the app's own paths answer index.html; a missing asset is a 404, not the page", async () => {
    const { http } = appFor({ enabled: true, path: '/console' });
    for (const path of ['/console', '/console/users', '/console/audit/anything', '/console/index.html']) {
      const res = await http.get(path).expect(200);
      expect({ path, text: res.text }).toEqual({ path, text: SERVED });
    }
    const missing = await http.get('/console/assets/gone-123.js').expect(404);
    expect(missing.body.errCode).toBe('NotFound');
    // other paths and methods are the API's
    expect((await http.get('/consoles').expect(404)).body.errCode).toBe('RouteNotFound');
    expect((await http.post('/console/users').expect(404)).body.errCode).toBe('RouteNotFound');
  });

  it('answers gzip to those that accept it', async () => {
    const { http } = appFor({ enabled: true, path: '/console' });
    const res = await http.get('/console/assets/index-abc123.js').set('Accept-Encoding', 'gzip').expect(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.text).toBe(SCRIPT); // supertest inflates it
  });

  it('disabled: nothing is mounted', async () => {
    const { http, mounted } = appFor({ enabled: false, path: '/console' });
    expect(mounted).toBe(false);
    expect((await http.get('/console/').expect(404)).body.errCode).toBe('RouteNotFound');
  });

  it('another path serves there only', async () => {
    const { http, served } = appFor({ enabled: true, path: '/admin/ui' });
    expect(served).toBe('/admin/ui');
    await http.get('/admin/ui/users').expect(200);
    expect((await http.get('/console/').expect(404)).body.errCode).toBe('RouteNotFound');
  });

  it('not built: one log line, and a 404 that says so', async () => {
    const { http, logged, served } = appFor({ enabled: true, path: '/console' }, join(dir, 'nothing-here'));
    expect(served).toBeUndefined();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/admin console not built/);
    const res = await http.get('/console/users').expect(404);
    expect(res.body).toMatchObject({ result: 'ERR', errCode: 'ConsoleNotBuilt', detail: expect.stringMatching(/npm run build/) });
  });
});
