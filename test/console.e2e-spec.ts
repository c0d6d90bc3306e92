import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CONSOLE_CSP } from '../src/operations/console/console-static.js';
import { projectPath } from '../src/platform/config/project-path.js';
import { startApp, type TestApp } from './helpers.js';

// The admin console as the service serves it (docs/console.md): its files at /console in every
// mode, with the security headers of every answer and the console's own CSP and caching.
describe('the admin console is served at /console', () => {
  let t: TestApp;
  beforeAll(async () => {
    // .ci/run builds before the tests; a developer's run builds it here when missing (~1 s).
    if (!existsSync(projectPath('dist', 'console', 'index.html'))) execFileSync(process.execPath, [projectPath('scripts', 'console-build.mjs')], { stdio: 'inherit' });
    t = await startApp();
  });
  afterAll(() => t?.close());

  it('the page, with no store header, its CSP and the headers of every answer', async () => {
    const res = await t.http.get('/console/users').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['x-request-id']).toBeDefined();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(res.text)?.[1];
    expect(script).toBeDefined();
    const js = await t.http.get(script!).expect(200);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
  });

  it('the API around it is unchanged', async () => {
    const live = await t.http.get('/auth-api/v1/briefstores').expect(200);
    expect(live.headers['cache-control']).toBe('no-store');
    expect(live.headers['content-security-policy']).not.toBe(CONSOLE_CSP);
  });
});

describe('console.enabled false', () => {
  it('serves nothing there', async () => {
    const t = await startApp({ settings: { console: { enabled: false } } });
    try {
      const res = await t.http.get('/console/').expect(404);
      expect(res.body.errCode).toBe('RouteNotFound');
    } finally {
      await t.close();
    }
  });
});
