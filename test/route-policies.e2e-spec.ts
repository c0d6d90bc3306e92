import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PolicyAudit } from '../src/common/policy-audit.js';
import { startApp, type TestApp } from './helpers.js';

// The security surface as a reviewed list: every route with its policy. A change here is a
// permission change and must read like one in the diff.
const ADMINS = 'roles=superAdmin,admin,saasAdmin,tenantOwner,tenantAdmin';

const ROUTES = [
  { method: 'GET', path: '/auth-api/.well-known/jwks.json', policy: 'public' },
  { method: 'GET', path: '/auth-api/avatars/:file', policy: 'public' },
  { method: 'GET', path: '/auth-api/bucket/userAvatars/download/key/:accessKey', policy: 'public' },
  { method: 'POST', path: '/auth-api/bucket/userAvatars/upload', policy: 'authenticated(user) bucketToken' },
  { method: 'GET', path: '/auth-api/currentuser', policy: 'authenticated(user)' },
  { method: 'POST', path: '/auth-api/login', policy: 'public' },
  { method: 'POST', path: '/auth-api/logout', policy: 'public' },
  { method: 'GET', path: '/auth-api/publickey', policy: 'public' },
  // own sessions only; the service scopes them to the caller
  { method: 'DELETE', path: '/auth-api/sessions', policy: 'authenticated(user)' },
  { method: 'GET', path: '/auth-api/sessions', policy: 'authenticated(user)' },
  { method: 'DELETE', path: '/auth-api/sessions/:id', policy: 'authenticated(user)' },
  { method: 'POST', path: '/auth-api/users', policy: `authenticated(user,apiKey) ${ADMINS} publicWhen=userRegisterIsPublic` },
  // API keys: managed with a person's login; the plaintext is shown once
  { method: 'GET', path: '/auth-api/v1/apikeys', policy: 'authenticated(user)' },
  { method: 'POST', path: '/auth-api/v1/apikeys', policy: 'authenticated(user)' },
  { method: 'DELETE', path: '/auth-api/v1/apikeys/:id', policy: 'authenticated(user)' },
  { method: 'GET', path: '/auth-api/v1/briefstores', policy: 'public' },
  { method: 'POST', path: '/auth-api/v1/registerstoreowner', policy: 'public' },
  { method: 'POST', path: '/auth-api/v1/registerstoreuser', policy: 'public' },
  { method: 'GET', path: '/auth-api/v1/users', policy: `authenticated(user,apiKey) ${ADMINS}` },
  { method: 'DELETE', path: '/auth-api/v1/users/:id', policy: `authenticated(user) ${ADMINS}` },
  // any user: admins read and change users of the store, a user only itself (checked in the service)
  { method: 'GET', path: '/auth-api/v1/users/:id', policy: 'authenticated(user,apiKey)' },
  { method: 'PATCH', path: '/auth-api/v1/users/:id', policy: 'authenticated(user)' },
  // internal: other services, with a machine token
  { method: 'POST', path: '/auth-api/validateapikey', policy: 'authenticated(machine)' },
  { method: 'GET', path: '/health/live', policy: 'public' },
  { method: 'GET', path: '/health/ready', policy: 'public' },
  // the caller's own in-app notifications in its store
  { method: 'GET', path: '/notifications', policy: 'authenticated(user)' },
  { method: 'POST', path: '/notifications/:id/read', policy: 'authenticated(user)' },
  { method: 'GET', path: '/notifications/unread', policy: 'authenticated(user)' },
];

const PUBLIC_PATHS = [
  'GET /auth-api/.well-known/jwks.json',
  'GET /auth-api/avatars/:file',
  'GET /auth-api/bucket/userAvatars/download/key/:accessKey',
  'POST /auth-api/login',
  'POST /auth-api/logout',
  'GET /auth-api/publickey',
  'GET /auth-api/v1/briefstores',
  'POST /auth-api/v1/registerstoreowner',
  'POST /auth-api/v1/registerstoreuser',
  'GET /health/live',
  'GET /health/ready',
];

describe('route policies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { DATA_DIR: ':memory:' } });
  });
  afterAll(() => t.close());

  it('match the reviewed list, route by route', () => {
    expect(t.app.get(PolicyAudit).routes()).toEqual(ROUTES);
  });

  it('leave public exactly the routes meant to be public', () => {
    const open = t.app
      .get(PolicyAudit)
      .routes()
      .filter((r) => r.policy === 'public')
      .map((r) => `${r.method} ${r.path}`);
    expect(open.sort()).toEqual([...PUBLIC_PATHS].sort());
  });
});
