import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AvatarService } from '../src/identity/avatar/avatar.service.js';
// The service's configuration: the platform's AppConfig over the service's own sections.
import { ServiceConfig as AppConfig } from '../src/settings.js';
import { PASSWORD, login, registerStore, startApp, uniqueEmail, type TestApp } from './helpers.js';

const HEADER = 'svc-store-codename';
const GENERATED = /\/auth-api\/avatars\/[a-f0-9]{32}\.svg$/;

// Generated avatars are absolute links, as uploads are, so a client on another origin can show
// them: from PUBLIC_URL, else the address the request was sent to.
describe('generated avatar links without PUBLIC_URL', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp();
    // A real listening address, so the links can be fetched as a browser would.
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(() => t.close());

  it('a registration answers absolute avatar links that load as SVG images', async () => {
    const res = await t.http
      .post('/auth-api/v1/registerstoreowner')
      .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Store Owner', store: { name: 'Avatar Store' } })
      .expect(201);
    for (const avatar of [res.body.user.avatar as string, res.body.store.avatar as string]) {
      expect(avatar.startsWith(`${base}/auth-api/avatars/`)).toBe(true);
      expect(avatar).toMatch(GENERATED);
      const image = await fetch(avatar);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await image.text()).toMatch(/^<svg /);
    }
  });

  it('PATCH /v1/users/:id accepts a generated link back, and avatar: null answers a new absolute one', async () => {
    const store = await registerStore(t.http);
    const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const patch = (avatar: string | null) =>
      t.http.patch(`/auth-api/v1/users/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${accessToken}`).send({ avatar });
    const current = (await t.http.get(`/auth-api/v1/users/${store.ownerId}`).set(HEADER, store.codename).set('Authorization', `Bearer ${accessToken}`).expect(200)).body.user
      .avatar as string;
    expect(current.startsWith(`${base}/`)).toBe(true);
    expect((await patch(current).expect(200)).body.user.avatar).toBe(current);
    const regenerated = (await patch(null).expect(200)).body.user.avatar as string;
    expect(regenerated.startsWith(`${base}/auth-api/avatars/`)).toBe(true);
    expect(regenerated).not.toBe(current);
  });

  it('outside a request (the seed at boot) the link points at the address the service listens on', () => {
    expect(t.app.get(AvatarService).generate()).toMatch(new RegExp(`^http://localhost:3000${GENERATED.source}`));
  });
});

describe('generated avatar links behind a trusted proxy', () => {
  let t: TestApp;
  beforeAll(async () => (t = await startApp({ env: { TRUST_PROXY: 'true' } })));
  afterAll(() => t.close());

  it('take the scheme the proxy was called with (X-Forwarded-Proto) and the Host header', async () => {
    const res = await t.http
      .post('/auth-api/v1/registerstoreowner')
      .set('Host', 'id.example.test')
      .set('X-Forwarded-Proto', 'https')
      .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Store Owner', store: { name: 'Proxied Store' } })
      .expect(201);
    expect(res.body.user.avatar).toMatch(new RegExp(`^https://id\\.example\\.test${GENERATED.source}`));
    expect(res.headers['strict-transport-security']).toMatch(/^max-age=/);
  });
});

describe('generated avatar links with PUBLIC_URL', () => {
  it('are built from PUBLIC_URL, in a request or not', () => {
    const avatars = new AvatarService(AppConfig.load({ env: { PUBLIC_URL: 'https://auth.example.test/' } }));
    expect(avatars.generate()).toMatch(new RegExp(`^https://auth\\.example\\.test${GENERATED.source}`));
  });
});
