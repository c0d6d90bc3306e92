import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express from 'express';
import { Secret, TOTP } from 'otpauth';
import request from 'supertest';
import { Authenticated, Principal, Public, RequirePermission, Roles, SvcAuthModule, requirePermission, svcAuthMiddleware, type SvcAuthOptions, type SvcPrincipal, type SvcRequest } from '@svc/nest';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, type RegisteredStore, type TestApp } from '../../../test/helpers.js';

// @svc/nest against the running service: a small Nest app (and an Express one) admits and refuses
// the service's tokens and API keys as the service does, notices a logout and a revoked grant
// within its cache time, and refuses another store's token and an unfinished sign-in's.

const HEADER = 'svc-store-codename';
const CACHE_SECONDS = 1;
const pastCache = () => new Promise((resolve) => setTimeout(resolve, CACHE_SECONDS * 1000 + 200));

@Controller()
class ProbeController {
  @Get('open')
  @Public()
  open(@Principal() principal: SvcPrincipal | undefined) {
    return { open: true, principal: principal ?? null };
  }

  @Get('me')
  @Authenticated()
  me(@Principal() principal: SvcPrincipal) {
    const { token: _token, ...rest } = principal;
    return rest;
  }

  // No decorator: a valid caller is required.
  @Get('undeclared')
  undeclared() {
    return { ok: true };
  }

  @Get('admin')
  @Roles('tenantOwner', 'tenantAdmin')
  admin() {
    return { ok: true };
  }

  @Get('users')
  @RequirePermission('users.list')
  users(@Principal() principal: SvcPrincipal) {
    return { permissions: principal.permissions };
  }
}

async function backend(options: SvcAuthOptions): Promise<INestApplication> {
  @Module({ imports: [SvcAuthModule.forRoot(options)], controllers: [ProbeController] })
  class BackendModule {}
  const app = await NestFactory.create(BackendModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

// The envelope without the service's request id: the part a client switches on.
function envelope(res: { status: number; body: Record<string, unknown> }) {
  const { result, status, errCode, message, detail } = res.body;
  return { httpStatus: res.status, result, status, errCode, message, detail };
}

let svc: TestApp;
let baseUrl: string;
let store: RegisteredStore;
let other: RegisteredStore;
let owner: string;
let apiKey: string;

const as = (method: 'get' | 'post' | 'delete', path: string, bearer?: string, codename = store.codename) => {
  const req = svc.http[method](path).set(HEADER, codename);
  return bearer === undefined ? req : req.set('Authorization', `Bearer ${bearer}`);
};

async function addUser(roleId: string): Promise<{ id: string; email: string }> {
  const email = uniqueEmail();
  const res = await as('post', '/auth-api/users', owner).send({ email, password: PASSWORD, fullname: 'Member', roleId }).expect(201);
  return { id: res.body.user.id, email };
}

beforeAll(async () => {
  // Grants count only with permission-based access on.
  svc = await startApp({ settings: { pbacIsActive: true } });
  await svc.app.listen(0, '127.0.0.1');
  baseUrl = `http://127.0.0.1:${(svc.app.getHttpServer().address() as AddressInfo).port}`;
  [store, other] = await Promise.all([registerStore(svc.http), registerStore(svc.http)]);
  owner = (await login(svc.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  // The store owner's API key: an administrator's, which introspection takes.
  apiKey = (await as('post', '/auth-api/v1/apikeys', owner).send({ name: 'backend' }).expect(201)).body.apiKey.key;
});

afterAll(async () => {
  await svc?.close();
});

describe('SvcAuthModule with an administrator\'s API key', () => {
  let app: INestApplication;
  let http: ReturnType<typeof request>;
  beforeAll(async () => {
    app = await backend({ baseUrl, apiKey, cacheSeconds: CACHE_SECONDS });
    http = request(app.getHttpServer());
  });
  afterAll(async () => {
    await app?.close();
  });

  it('opens @Public() routes to anyone and admits a valid login elsewhere, with its principal', async () => {
    expect((await http.get('/open').expect(200)).body).toEqual({ open: true, principal: null });
    await http.get('/open').set('Authorization', 'Bearer not-a-token').expect(200);
    const me = (await http.get('/me').set('Authorization', `Bearer ${owner}`).expect(200)).body;
    expect(me).toEqual({ kind: 'user', userId: store.ownerId, storeId: store.storeId, store: store.codename, roles: ['tenantOwner'], sessionId: expect.any(String), acr: 'aal1', amr: ['pwd'] });
    await http.get('/undeclared').set('Authorization', `Bearer ${owner}`).expect(200);
    await http.get('/admin').set('Authorization', `Bearer ${owner}`).expect(200);
  });

  it('refuses a missing or bad token with the service\'s own answer', async () => {
    const forged = `${owner.slice(0, owner.lastIndexOf('.'))}.${'A'.repeat(342)}`;
    for (const bearer of [undefined, 'not-a-token', forged]) {
      const mine = bearer === undefined ? await http.get('/me') : await http.get('/me').set('Authorization', `Bearer ${bearer}`);
      const theirs = await as('get', '/auth-api/permissions', bearer);
      expect(envelope(mine)).toEqual(envelope(theirs));
      expect(envelope(mine)).toMatchObject({ httpStatus: 401, result: 'ERR', status: 401, errCode: 'Unauthorized', message: 'errMsg_Unauthorized' });
      await http.get('/undeclared').set('Authorization', `Bearer ${bearer ?? ''}`).expect(401);
    }
  });

  it('refuses a role the route does not name (403 Forbidden)', async () => {
    const user = await addUser('tenantUser');
    const token = (await login(svc.http, user.email, PASSWORD, store.codename)).accessToken;
    await http.get('/me').set('Authorization', `Bearer ${token}`).expect(200);
    expect(envelope(await http.get('/admin').set('Authorization', `Bearer ${token}`))).toMatchObject({ httpStatus: 403, errCode: 'Forbidden', message: 'errMsg_Forbidden' });
  });

  it('accepts an API key, with its creator\'s roles', async () => {
    const me = (await http.get('/me').set('Authorization', `Bearer ${apiKey}`).expect(200)).body;
    expect(me).toMatchObject({ kind: 'apiKey', userId: store.ownerId, storeId: store.storeId, store: store.codename, roles: ['tenantOwner'] });
    await http.get('/admin').set('Authorization', `Bearer ${apiKey}`).expect(200);
    expect(envelope(await http.get('/me').set('Authorization', `Bearer sk_svc_${'x'.repeat(40)}`))).toMatchObject({ httpStatus: 401, errCode: 'Unauthorized' });
  });

  it('refuses a session after its logout at the service, within the cache time', async () => {
    const user = await addUser('tenantUser');
    const token = (await login(svc.http, user.email, PASSWORD, store.codename)).accessToken;
    await http.get('/me').set('Authorization', `Bearer ${token}`).expect(200);
    await as('post', '/auth-api/logout', token).expect(200);
    await pastCache();
    const mine = await http.get('/me').set('Authorization', `Bearer ${token}`);
    const theirs = await as('get', '/auth-api/permissions', token);
    expect(envelope(mine)).toMatchObject({ httpStatus: 401, errCode: 'Unauthorized' });
    expect(envelope(mine)).toEqual(envelope(theirs));
  });

  it('follows a permission grant and its revocation, within the cache time', async () => {
    const user = await addUser('tenantUser');
    const token = (await login(svc.http, user.email, PASSWORD, store.codename)).accessToken;
    const mine = () => http.get('/users').set('Authorization', `Bearer ${token}`).set(HEADER, store.codename);
    const theirs = () => as('get', '/auth-api/v1/users', token);

    expect(envelope(await mine())).toMatchObject({ httpStatus: 403, errCode: 'PermissionDenied', detail: 'you do not have the permission "users.list"' });
    expect(envelope(await theirs())).toMatchObject({ httpStatus: 403, errCode: 'PermissionDenied' });

    const grant = (await as('post', '/auth-api/v1/permissiongrants', owner).send({ userId: user.id, permission: 'users.list', canDo: true }).expect(201)).body.permissionGrant.id;
    await pastCache();
    await theirs().expect(200);
    expect((await mine().expect(200)).body.permissions).toContain('users.list');

    await as('delete', `/auth-api/v1/permissiongrants/${grant}`, owner).expect(200);
    await pastCache();
    const refused = await mine();
    expect(envelope(refused)).toMatchObject({ httpStatus: 403, errCode: 'PermissionDenied' });
    expect(envelope(refused).errCode).toBe(envelope(await theirs()).errCode);
  });

  it('refuses a token of an unfinished sign-in (a second factor still due), as the service does', async () => {
    const user = await addUser('tenantUser');
    const first = (await login(svc.http, user.email, PASSWORD, store.codename)).accessToken;
    const secret = (await as('post', '/auth-api/mfa/totp/setup', first).expect(200)).body.secret as string;
    await as('post', '/auth-api/mfa/totp/confirm', first).send({ code: TOTP.generate({ secret: Secret.fromBase32(secret) }) }).expect(200);
    const pending = await login(svc.http, user.email, PASSWORD, store.codename);
    expect(pending.body.sessionNeedsTotp2FA).toBe(true);

    const mine = await http.get('/me').set('Authorization', `Bearer ${pending.accessToken}`).set(HEADER, store.codename);
    const theirs = await as('get', '/auth-api/permissions', pending.accessToken);
    expect(envelope(mine)).toMatchObject({ httpStatus: 403, errCode: 'TotpTwoFactorNeeded' });
    expect(envelope(mine).errCode).toBe(envelope(theirs).errCode);
    await http.get('/me').set('Authorization', `Bearer ${pending.accessToken}`).expect(403);

    // Once the sign-in is complete, its pending token still serves nothing; the new one does.
    const next = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + 30_000 });
    const done = (await as('post', '/auth-api/mfa/totp/verify', pending.accessToken).send({ code: next }).expect(200)).body.accessToken as string;
    await pastCache();
    const after = await http.get('/me').set('Authorization', `Bearer ${pending.accessToken}`);
    expect(envelope(after)).toMatchObject({ httpStatus: 401, errCode: 'AccessTokenPending' });
    expect(envelope(after).errCode).toBe(envelope(await as('get', '/auth-api/permissions', pending.accessToken)).errCode);
    expect((await http.get('/me').set('Authorization', `Bearer ${done}`).expect(200)).body).toMatchObject({ acr: 'aal2' });
  });
});

describe('SvcAuthModule for one store', () => {
  let app: INestApplication;
  beforeAll(async () => {
    app = await backend({ baseUrl, apiKey, store: store.codename, cacheSeconds: CACHE_SECONDS });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('refuses a token of another store (403 TenantMismatch), as the service does', async () => {
    const stranger = (await login(svc.http, other.ownerEmail, PASSWORD, other.codename)).accessToken;
    const mine = await request(app.getHttpServer()).get('/me').set('Authorization', `Bearer ${stranger}`);
    const theirs = await as('get', '/auth-api/permissions', stranger);
    expect(envelope(mine)).toMatchObject({ httpStatus: 403, errCode: 'TenantMismatch', message: 'errMsg_TenantMismatch' });
    expect(envelope(mine).errCode).toBe(envelope(theirs).errCode);
    await request(app.getHttpServer()).get('/me').set('Authorization', `Bearer ${owner}`).expect(200);
  });
});

describe('SvcAuthModule without an API key (offline verification)', () => {
  let app: INestApplication;
  beforeAll(async () => {
    app = await backend({ baseUrl, cacheSeconds: CACHE_SECONDS });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('verifies tokens by the keys alone, asks roles with the caller\'s token, and refuses API keys', async () => {
    const user = await addUser('tenantUser');
    const token = (await login(svc.http, user.email, PASSWORD, store.codename)).accessToken;
    const http = request(app.getHttpServer());
    expect((await http.get('/me').set('Authorization', `Bearer ${token}`).expect(200)).body).toMatchObject({ kind: 'user', userId: user.id, storeId: store.storeId, roles: [] });
    await http.get('/admin').set('Authorization', `Bearer ${owner}`).set(HEADER, store.codename).expect(200);
    expect(envelope(await http.get('/admin').set('Authorization', `Bearer ${token}`).set(HEADER, store.codename))).toMatchObject({ httpStatus: 403, errCode: 'Forbidden' });
    expect(envelope(await http.get('/me').set('Authorization', `Bearer ${apiKey}`))).toMatchObject({ httpStatus: 401, errCode: 'Unauthorized' });
    // A logout is not seen offline: the token stays valid here until it expires.
    await as('post', '/auth-api/logout', token).expect(200);
    await http.get('/me').set('Authorization', `Bearer ${token}`).expect(200);
  });
});

describe('svcAuthMiddleware (Express)', () => {
  let server: ReturnType<ReturnType<typeof express>['listen']>;
  let http: ReturnType<typeof request>;
  beforeAll(async () => {
    const app = express();
    app.get('/open', (_req, res) => void res.json({ open: true }));
    app.use(svcAuthMiddleware({ baseUrl, apiKey, cacheSeconds: CACHE_SECONDS }));
    app.get('/me', (req, res) => {
      const { principal } = req as SvcRequest;
      res.json({ userId: principal?.userId, kind: principal?.kind });
    });
    app.get('/users', requirePermission('users.list'), (_req, res) => void res.json({ ok: true }));
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    http = request(server);
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('sets req.principal or answers the service\'s 401, and checks a permission', async () => {
    await http.get('/open').expect(200);
    const missing = await http.get('/me');
    expect(envelope(missing)).toEqual(envelope(await as('get', '/auth-api/permissions')));
    expect((await http.get('/me').set('Authorization', `Bearer ${owner}`).expect(200)).body).toEqual({ userId: store.ownerId, kind: 'user' });
    expect((await http.get('/me').set('Authorization', `Bearer ${apiKey}`).expect(200)).body).toEqual({ userId: store.ownerId, kind: 'apiKey' });
    await http.get('/users').set('Authorization', `Bearer ${owner}`).expect(200);
    const user = await addUser('tenantUser');
    const token = (await login(svc.http, user.email, PASSWORD, store.codename)).accessToken;
    expect(envelope(await http.get('/users').set('Authorization', `Bearer ${token}`))).toMatchObject({ httpStatus: 403, errCode: 'PermissionDenied' });
  });
});
