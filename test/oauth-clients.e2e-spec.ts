import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { OAuthClientService } from '../src/identity/oauth-client/oauth-client.service.js';
import { collectLog, expectError, login, PASSWORD, registerStore, SUPER_ADMIN, startApp, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

const HEADER = 'svc-store-codename';
const BASE = '/auth-api/v1/oauthclients';
const log = collectLog();

interface Admin {
  store: RegisteredStore;
  token: string;
}

async function admin(t: TestApp): Promise<Admin> {
  const store = await registerStore(t.http);
  const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  return { store, token: accessToken };
}

function as(t: TestApp, a: Admin) {
  const auth = <T extends { set(name: string, value: string): T }>(req: T) => req.set(HEADER, a.store.codename).set('Authorization', `Bearer ${a.token}`);
  return {
    create: (body: object) => auth(t.http.post(BASE)).send(body),
    list: (query = '') => auth(t.http.get(`${BASE}${query}`)),
    get: (id: string) => auth(t.http.get(`${BASE}/${id}`)),
    patch: (id: string, body: object) => auth(t.http.patch(`${BASE}/${id}`)).send(body),
    delete: (id: string) => auth(t.http.delete(`${BASE}/${id}`)),
    rotate: (id: string) => auth(t.http.post(`${BASE}/${id}/rotate-secret`)),
    audit: (action: string) => auth(t.http.get(`/auth-api/v1/auditlogs?action=${encodeURIComponent(action)}`)),
  };
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const WEB = { name: 'Storefront', redirectUris: ['https://shop.example.com/callback'] };
const EC_KEY = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1', use: 'sig' };

async function row(t: TestApp, id: string): Promise<Record<string, unknown>> {
  const [found] = (await t.app.get(DataSource).query(`SELECT * FROM "oauth_client" WHERE "id" = $1`, [id])) as Record<string, unknown>[];
  return found;
}

describe('OAuth clients: registration, validation, secrets, tenancy', () => {
  let t: TestApp;
  let a: Admin;
  beforeAll(async () => {
    t = await startApp({ env: { LOG_LEVEL: 'debug' }, ...log.logged });
  });
  // a store of its own per test
  beforeEach(async () => {
    a = await admin(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a confidential client: 201 with its secret once (32 bytes base64url); the database holds its SHA-256 only; the secret is in no answer, audit entry or log line after', async () => {
    const from = log.mark();
    const res = await as(t, a).create({ ...WEB, postLogoutRedirectUris: ['https://shop.example.com/bye'], scopes: ['openid', 'email', 'profile'] }).expect(201);
    const client = res.body.oauthClient;
    expect(client).toEqual({
      id: expect.any(String),
      clientId: expect.stringMatching(/^oc_[A-Za-z0-9_-]{22}$/),
      name: 'Storefront',
      redirectUris: ['https://shop.example.com/callback'],
      postLogoutRedirectUris: ['https://shop.example.com/bye'],
      grantTypes: ['authorization_code'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      scopes: ['openid', 'email', 'profile'],
      firstParty: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      clientSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const secret = client.clientSecret as string;
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    const stored = await row(t, client.id);
    expect(stored.secretHash).toBe(sha256(secret));
    expect(stored.storeId).toBe(a.store.storeId);
    expect(JSON.stringify(stored)).not.toContain(secret);
    // never again in an answer
    const answers = [await as(t, a).get(client.id).expect(200), await as(t, a).list().expect(200), await as(t, a).patch(client.id, { name: 'Shop' }).expect(200)];
    for (const { body } of answers) {
      expect(JSON.stringify(body)).not.toContain(secret);
      expect(JSON.stringify(body)).not.toContain(stored.secretHash);
    }
    // the audit entries, in the store's chain, without the secret or its hash
    const entries = await t.app.get(DataSource).query(`SELECT * FROM "audit_log" WHERE "storeId" = $1 AND "action" LIKE 'oauth.client.%'`, [a.store.storeId]);
    expect(entries.map((e: { action: string }) => e.action).sort()).toEqual(['oauth.client.created', 'oauth.client.updated']);
    expect(JSON.stringify(entries)).not.toContain(secret);
    expect(JSON.stringify(entries)).not.toContain(stored.secretHash);
    expect(log.rawSince(from).join('\n')).not.toContain(secret);
  });

  it('a public client (none): no secret, nothing stored; a native one may use a private-use scheme and loopback http', async () => {
    const res = await as(t, a)
      .create({ name: 'Mobile', redirectUris: ['com.example.app:/callback', 'http://127.0.0.1:8765/cb', 'http://[::1]/cb', 'http://localhost:3000/cb'], grantTypes: ['authorization_code', 'refresh_token'], tokenEndpointAuthMethod: 'none', scopes: ['openid', 'offline_access'] })
      .expect(201);
    const client = res.body.oauthClient;
    expect(client).not.toHaveProperty('clientSecret');
    expect(client).toMatchObject({ tokenEndpointAuthMethod: 'none', grantTypes: ['authorization_code', 'refresh_token'] });
    expect((await row(t, client.id)).secretHash).toBeNull();
    expectError(await as(t, a).rotate(client.id), 400, 'OAuthClientInvalid');
  });

  it('private_key_jwt: a public JWK Set, required; no secret', async () => {
    const res = await as(t, a).create({ ...WEB, grantTypes: ['client_credentials'], redirectUris: [], tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC_KEY] } }).expect(201);
    expect(res.body.oauthClient).not.toHaveProperty('clientSecret');
    expect(await row(t, res.body.oauthClient.id)).toMatchObject({ secretHash: null, jwks: { keys: [EC_KEY] } });
  });

  it.each([
    ['a relative redirect URI', { redirectUris: ['/callback'] }, /not an absolute URI/],
    ['http on a public host', { redirectUris: ['http://shop.example.com/cb'] }, /not loopback/],
    ['a fragment', { redirectUris: ['https://shop.example.com/cb#x'] }, /fragment/],
    ['credentials in the URI', { redirectUris: ['https://user:pw@shop.example.com/cb'] }, /credentials/],
    ['a private-use scheme for a confidential client', { redirectUris: ['com.example.app:/callback'] }, /only clients with tokenEndpointAuthMethod "none"/],
    ['a scheme that is no reverse domain name', { redirectUris: ['javascript:alert(1)'], tokenEndpointAuthMethod: 'none' }, /reverse domain name/],
    ['a bad post-logout URI', { postLogoutRedirectUris: ['http://evil.example.com/'] }, /postLogoutRedirectUris/],
    // the request's own validation (the DTO's array limit)
    ['more than 20 redirect URIs', { redirectUris: Array.from({ length: 21 }, (_, i) => `https://shop.example.com/cb${i}`) }, 'ValidationFailed'],
    ['authorization_code without a redirect URI', { redirectUris: [] }, /at least one/],
    ['none with client_credentials', { tokenEndpointAuthMethod: 'none', grantTypes: ['client_credentials'] }, /client_credentials needs a confidential client/],
    ['refresh_token without authorization_code', { grantTypes: ['client_credentials', 'refresh_token'] }, /refresh_token needs authorization_code/],
    ['private_key_jwt without jwks', { tokenEndpointAuthMethod: 'private_key_jwt' }, /jwks: required/],
    ['a JWK Set with a private key', { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ ...EC_KEY, d: 'jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI' }] } }, /private members: d/],
    ['a JWK Set with a symmetric key', { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, /kty/],
    ['an RSA private key', { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ kty: 'RSA', n: 'AQAB', e: 'AQAB', p: 'x', q: 'y', dp: 'z' }] } }, /private members: p, q, dp/],
    ['jwks with a secret-based method', { jwks: { keys: [EC_KEY] } }, /only a private_key_jwt client/],
  ] as Array<[string, object, RegExp | 'ValidationFailed']>)('refused: %s → 400', async (_, changes, detail) => {
    const res = await as(t, a).create({ ...WEB, ...changes });
    if (detail === 'ValidationFailed') {
      expectError(res, 400, 'ValidationFailed');
    } else {
      expectError(res, 400, 'OAuthClientInvalid');
      expect(res.body.detail).toMatch(detail);
    }
    expect((await as(t, a).list().expect(200)).body.oauthClients).toEqual([]);
  });

  it('refused by the request\'s validation: unknown fields, an unknown grant type, scope or method', async () => {
    expectError(await as(t, a).create({ ...WEB, clientSecret: 'mine' }), 400, 'UnknownField');
    expectError(await as(t, a).create({ ...WEB, grantTypes: ['password'] }), 400, 'ValidationFailed');
    expectError(await as(t, a).create({ ...WEB, grantTypes: ['implicit'] }), 400, 'ValidationFailed');
    expectError(await as(t, a).create({ ...WEB, scopes: ['admin'] }), 400, 'ValidationFailed');
    expectError(await as(t, a).create({ ...WEB, tokenEndpointAuthMethod: 'client_secret_jwt' }), 400, 'ValidationFailed');
    expectError(await as(t, a).create({ redirectUris: WEB.redirectUris }), 400, 'ValidationFailed');
    expect((await as(t, a).list().expect(200)).body.oauthClients).toEqual([]);
  });

  it('lists paged, newest first, without secrets', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await as(t, a).create({ ...WEB, name: `c${i}` }).expect(201)).body.oauthClient.id);
    const first = await as(t, a).list('?pageRowCount=2').expect(200);
    expect(first.body.paging).toEqual({ pageNumber: 1, pageRowCount: 2, totalRowCount: 3, pageCount: 2 });
    expect(first.body.oauthClients.map((c: { name: string }) => c.name)).toEqual(['c2', 'c1']);
    const second = await as(t, a).list('?pageRowCount=2&pageNumber=2').expect(200);
    expect(second.body.oauthClients.map((c: { id: string }) => c.id)).toEqual([made[0]]);
    for (const c of [...first.body.oauthClients, ...second.body.oauthClients]) {
      expect(c).not.toHaveProperty('clientSecret');
      expect(c).not.toHaveProperty('secretHash');
    }
  });

  it('get, patch (checked with the rest of the client), delete', async () => {
    const client = (await as(t, a).create({ ...WEB, tokenEndpointAuthMethod: 'client_secret_post' }).expect(201)).body.oauthClient;
    expect((await as(t, a).get(client.id).expect(200)).body.oauthClient).toMatchObject({ id: client.id, clientId: client.clientId, tokenEndpointAuthMethod: 'client_secret_post' });
    const patched = await as(t, a).patch(client.id, { name: 'Renamed', grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], scopes: ['openid', 'offline_access', 'roles'], firstParty: true, postLogoutRedirectUris: ['https://shop.example.com/bye'] }).expect(200);
    expect(patched.body.oauthClient).toMatchObject({ name: 'Renamed', grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], scopes: ['openid', 'offline_access', 'roles'], firstParty: true, postLogoutRedirectUris: ['https://shop.example.com/bye'] });
    expectError(await as(t, a).patch(client.id, { redirectUris: [] }), 400, 'OAuthClientInvalid');
    expectError(await as(t, a).patch(client.id, { grantTypes: ['refresh_token'] }), 400, 'OAuthClientInvalid');
    expectError(await as(t, a).patch(client.id, { redirectUris: ['com.example.app:/cb'] }), 400, 'OAuthClientInvalid');
    // the authentication method is not for changing
    expectError(await as(t, a).patch(client.id, { tokenEndpointAuthMethod: 'none' }), 400, 'UnknownField');
    expect((await as(t, a).get(client.id).expect(200)).body.oauthClient).toMatchObject({ name: 'Renamed', redirectUris: WEB.redirectUris, tokenEndpointAuthMethod: 'client_secret_post' });
    expect((await as(t, a).delete(client.id).expect(200)).body.oauthClient).toEqual({ id: client.id });
    expectError(await as(t, a).get(client.id), 404, 'OAuthClientNotFound');
    expectError(await as(t, a).delete(client.id), 404, 'OAuthClientNotFound');
    expect(await row(t, client.id)).toBeUndefined();
  });

  it('rotating the secret: the new one once, hashed; the previous hash is gone at once', async () => {
    const client = (await as(t, a).create(WEB).expect(201)).body.oauthClient;
    const rotated = (await as(t, a).rotate(client.id).expect(200)).body.oauthClient;
    expect(rotated.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.clientSecret).not.toBe(client.clientSecret);
    expect(rotated.clientId).toBe(client.clientId);
    expect((await row(t, client.id)).secretHash).toBe(sha256(rotated.clientSecret));
    const meta = await t.app.get(OAuthClientService).metadataFor(a.store.storeId, client.clientId);
    expect(meta?.client_secret).toBe(sha256(rotated.clientSecret));
    expect(meta?.client_secret).not.toBe(sha256(client.clientSecret));
    const [entry] = (await as(t, a).audit('oauth.client.secret.rotated').expect(200)).body.auditLogs;
    expect(entry).toMatchObject({ action: 'oauth.client.secret.rotated', target: { type: 'oauthClient', id: client.id } });
    expect(JSON.stringify(entry)).not.toContain(rotated.clientSecret);
  });

  it('the provider\'s view: metadataFor and findByClientId, in the client\'s store only', async () => {
    const client = (await as(t, a).create({ ...WEB, grantTypes: ['authorization_code', 'refresh_token'], scopes: ['openid', 'offline_access'] }).expect(201)).body.oauthClient;
    const clients = t.app.get(OAuthClientService);
    expect(await clients.metadataFor(a.store.storeId, client.clientId)).toEqual({
      client_id: client.clientId,
      client_secret: sha256(client.clientSecret),
      redirect_uris: WEB.redirectUris,
      post_logout_redirect_uris: [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'openid offline_access',
      first_party: false,
    });
    expect((await clients.findByClientId(a.store.storeId, client.clientId))?.secretHash).toBe(sha256(client.clientSecret));
    const other = await admin(t);
    expect(await clients.metadataFor(other.store.storeId, client.clientId)).toBeUndefined();
    expect(await clients.findByClientId(other.store.storeId, client.clientId)).toBeNull();
    // a public machine-less client: no secret; client_credentials only: no response type
    const m2m = (await as(t, a).create({ name: 'Batch', redirectUris: [], grantTypes: ['client_credentials'], tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC_KEY] } }).expect(201)).body.oauthClient;
    expect(await clients.metadataFor(a.store.storeId, m2m.clientId)).toEqual(expect.objectContaining({ response_types: [], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [EC_KEY] }, scope: 'openid' }));
    expect(await clients.metadataFor(a.store.storeId, m2m.clientId)).not.toHaveProperty('client_secret');
  });

  it('every change is in the audit log: created, updated, deleted, secret rotated', async () => {
    const client = (await as(t, a).create(WEB).expect(201)).body.oauthClient;
    await as(t, a).patch(client.id, { name: 'Renamed' }).expect(200);
    await as(t, a).rotate(client.id).expect(200);
    await as(t, a).delete(client.id).expect(200);
    const entries = (await as(t, a).audit('oauth.client.*').expect(200)).body.auditLogs as { action: string; target: object; details: Record<string, unknown> }[];
    expect(entries.map((e) => e.action).sort()).toEqual(['oauth.client.created', 'oauth.client.deleted', 'oauth.client.secret.rotated', 'oauth.client.updated']);
    for (const e of entries) expect(e.target).toEqual({ type: 'oauthClient', id: client.id });
    expect(entries.find((e) => e.action === 'oauth.client.created')!.details).toMatchObject({ clientId: client.clientId, tokenEndpointAuthMethod: 'client_secret_basic' });
    expect(entries.find((e) => e.action === 'oauth.client.updated')!.details).toMatchObject({ fields: ['name'] });
    expect(JSON.stringify(entries)).not.toContain(client.clientSecret);
  });

  it('another store\'s administrator: 404 for this store\'s client, which its list does not show', async () => {
    const client = (await as(t, a).create(WEB).expect(201)).body.oauthClient;
    const other = await admin(t);
    expectError(await as(t, other).get(client.id), 404, 'OAuthClientNotFound');
    expectError(await as(t, other).patch(client.id, { name: 'Mine now' }), 404, 'OAuthClientNotFound');
    expectError(await as(t, other).rotate(client.id), 404, 'OAuthClientNotFound');
    expectError(await as(t, other).delete(client.id), 404, 'OAuthClientNotFound');
    expect((await as(t, other).list().expect(200)).body.oauthClients).toEqual([]);
    expect((await as(t, a).get(client.id).expect(200)).body.oauthClient.name).toBe('Storefront');
  });

  it('a user of the store who is not an administrator: 403', async () => {
    const email = uniqueEmail();
    await t.http.post('/auth-api/users').set(HEADER, a.store.codename).set('Authorization', `Bearer ${a.token}`).send({ email, password: PASSWORD, fullname: 'Plain' }).expect(201);
    const plain = { store: a.store, token: (await login(t.http, email, PASSWORD, a.store.codename)).accessToken };
    expect((await as(t, plain).list()).status).toBe(403);
    expect((await as(t, plain).create(WEB)).status).toBe(403);
  });

  it('a SaaS administrator manages any store it targets', async () => {
    const root = { store: a.store, token: (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken };
    const client = (await as(t, root).create(WEB).expect(201)).body.oauthClient;
    expect((await as(t, a).get(client.id).expect(200)).body.oauthClient.clientId).toBe(client.clientId);
    expect((await row(t, client.id)).storeId).toBe(a.store.storeId);
    await as(t, root).delete(client.id).expect(200);
  });
});

describe('OAuth clients: oidcProvider.enabled false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ settings: { oidcProvider: { enabled: false } }, ...log.logged });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every route answers 404 OidcProviderDisabled', async () => {
    const a = await admin(t);
    const id = '00000000-0000-4000-8000-000000000000';
    expectError(await as(t, a).create(WEB), 404, 'OidcProviderDisabled');
    expectError(await as(t, a).list(), 404, 'OidcProviderDisabled');
    expectError(await as(t, a).get(id), 404, 'OidcProviderDisabled');
    expectError(await as(t, a).patch(id, { name: 'x' }), 404, 'OidcProviderDisabled');
    expectError(await as(t, a).delete(id), 404, 'OidcProviderDisabled');
    expectError(await as(t, a).rotate(id), 404, 'OidcProviderDisabled');
  });

  it('the lifetimes are checked at boot', async () => {
    await expect(startApp({ settings: { oidcProvider: { accessTokenMinutes: 0, refreshTokenDays: 1000 } } })).rejects.toThrow(/settings\.oidcProvider\.accessTokenMinutes[\s\S]*settings\.oidcProvider\.refreshTokenDays/);
  });
});
