import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { MetricsModule } from '../src/operations/metrics/metrics.module.js';
import { expectError, PASSWORD, registerStore, startApp, unique, waitFor, type TestApp } from './helpers.js';

const PRODUCTION = { NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:3000', KEY_ENCRYPTION_SECRET: 'a production secret value', SUPER_ADMIN_PASSWORD: 'a production admin password 1' };

// The value of one series, e.g. sample(text, '_login_total{outcome="success"}').
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => !l.startsWith('#') && l.includes(series));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('GET /metrics (development default: open)', () => {
  let t: TestApp;
  const codename = unique('m');
  beforeAll(async () => {
    t = await startApp({ env: { SERVICE_CODENAME: codename } });
  });
  afterAll(() => t.close());
  const scrape = async () => (await t.http.get('/metrics').expect(200)).text;

  it('answers the Prometheus text format', async () => {
    const res = await t.http.get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('nodejs_eventloop_lag_seconds');
    expect(res.text).toMatch(new RegExp(`${codename}_db_pool_connections\\{state="total"\\} [1-9]`));
    expect(res.text).toContain(`${codename}_notification_queue_depth`);
  });

  it('times answers by route pattern and status, never by raw URL', async () => {
    await t.http.get('/auth-api/v1/briefstores').expect(200);
    await t.http.get(`/auth-api/v1/users/${'0'.repeat(8)}-0000-0000-0000-000000000000`).expect(401);
    await t.http.get(`/auth-api/nothing/${unique()}`).expect(404);
    const text = await scrape();
    expect(sample(text, `http_request_duration_seconds_count{method="GET",route="/auth-api/v1/briefstores",status="200"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, `http_request_duration_seconds_count{method="GET",route="/auth-api/v1/users/:id",status="401"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, `http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}`)).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('/auth-api/nothing/');
  });

  it('counts login outcomes', async () => {
    const store = await registerStore(t.http);
    await t.http.post('/auth-api/login').set('svc-store-codename', store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    await t.http.post('/auth-api/login').set('svc-store-codename', store.codename).send({ username: store.ownerEmail, password: 'wrong password!' }).expect(401);
    await t.http.post('/auth-api/login').send({}).expect(400);
    const text = await scrape();
    expect(sample(text, `${codename}_login_total{outcome="success"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, `${codename}_login_total{outcome="invalid_credentials"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, `${codename}_login_total{outcome="invalid_request"}`)).toBeGreaterThanOrEqual(1);
  });

  it('counts notification deliveries by channel and outcome (the welcome in-app notification)', async () => {
    await registerStore(t.http);
    const delivered = await waitFor('an in-app delivery', async () => {
      const value = sample(await scrape(), `${codename}_notification_deliveries_total{channel="inApp",outcome="delivered"}`);
      return value && value >= 1 ? value : undefined;
    });
    expect(delivered).toBeGreaterThanOrEqual(1);
  });

  it('sends security headers on every answer, HSTS excepted (HTTPS only): the short set on JSON answers, the document set on documents', async () => {
    for (const res of [await t.http.get('/auth-api/v1/briefstores'), await t.http.get('/auth-api/v1/nothing'), await t.http.post('/auth-api/login').send({}), await t.http.get('/health/live')]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['strict-transport-security']).toBeUndefined();
      // document-only headers stay off JSON answers
      expect(res.headers['cross-origin-opener-policy']).toBeUndefined();
      expect(res.headers['x-dns-prefetch-control']).toBeUndefined();
    }
    const page = await t.http.get('/docs/').expect(200);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(page.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(page.headers['strict-transport-security']).toBeUndefined();
  });

  it('lets other origins embed avatars', async () => {
    const res = await t.http.get(`/auth-api/avatars/${'ab'.repeat(16)}.svg`).expect(200);
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
  });

  it('keeps /docs working under the content security policy', async () => {
    const res = await t.http.get('/docs/').expect(200);
    expect(res.headers['content-security-policy']).toBeDefined();
    expect(res.text).not.toMatch(/<script>[^<]/); // no inline script the policy would block
  });
});

describe('GET /metrics protection', () => {
  it('needs the token when METRICS_TOKEN is set', async () => {
    const token = 'metrics-token-0123456789';
    const t = await startApp({ env: { ...PRODUCTION, METRICS_TOKEN: token } });
    try {
      expectError(await t.http.get('/metrics'), 401, 'Unauthorized');
      expectError(await t.http.get('/metrics').set('Authorization', 'Bearer metrics-token-wrong-value'), 401, 'Unauthorized');
      await t.http.get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
    } finally {
      await t.close();
    }
  });

  it('is off in production with neither a token nor an internal port', async () => {
    const t = await startApp({ env: PRODUCTION });
    try {
      expectError(await t.http.get('/metrics'), 404, 'RouteNotFound');
    } finally {
      await t.close();
    }
  });

  it('with METRICS_PORT, is served on that port only', async () => {
    const t = await startApp({ env: { METRICS_PORT: '0' } });
    try {
      expectError(await t.http.get('/metrics'), 404, 'RouteNotFound');
      const { port } = t.app.get(MetricsModule).address()!;
      const res = await request(`http://127.0.0.1:${port}`).get('/metrics').expect(200);
      expect(res.text).toContain('nodejs_eventloop_lag_seconds');
      await request(`http://127.0.0.1:${port}`).get('/other').expect(404);
    } finally {
      await t.close();
    }
  });
});
