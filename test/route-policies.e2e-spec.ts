import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PolicyAudit } from '../src/kernel/policy-audit.js';
import { startApp, type TestApp } from './helpers.js';

// The security surface as a reviewed list: every route with its policy. A change here is a
// permission change and must read like one in the diff.
const ADMINS = 'roles=superAdmin,admin,saasAdmin,tenantOwner,tenantAdmin';

const ROUTES = [
  { method: 'GET', path: '/auth-api/.well-known/jwks.json', policy: 'public' },
  // the discovery document offline verifiers start from
  { method: 'GET', path: '/auth-api/.well-known/openid-configuration', policy: 'public' },
  // social login and single sign-on: redirects, and the socialCode exchange (a code is the credential)
  { method: 'GET', path: '/auth-api/auth/:provider', policy: 'public' },
  { method: 'GET', path: '/auth-api/auth/:provider/callback', policy: 'public' },
  { method: 'POST', path: '/auth-api/auth/:provider/callback', policy: 'public' },
  { method: 'POST', path: '/auth-api/auth/social-login-result', policy: 'public' },
  { method: 'GET', path: '/auth-api/avatars/:file', policy: 'public' },
  { method: 'GET', path: '/auth-api/bucket/userAvatars/download/key/:accessKey', policy: 'public' },
  // API keys act as their creator: accepted wherever a login of the key's roles may go, except
  // creating or deleting keys, changing a password (checked in the service) and listing sessions
  { method: 'POST', path: '/auth-api/bucket/userAvatars/upload', policy: 'authenticated(user,apiKey) permission=none bucketToken' },
  // the ALTCHA challenge, when that anti-bot provider is on
  { method: 'GET', path: '/auth-api/challenge', policy: 'public' },
  // open while a second factor is pending; answers 401 No login found for a bad token or key
  { method: 'GET', path: '/auth-api/currentuser', policy: 'authenticated(user,apiKey) permission=none during2FA' },
  // RFC 7662 for backend services: a calling service, or an administrator's key (its own store's tokens only)
  { method: 'POST', path: '/auth-api/introspect', policy: `authenticated(apiKey,machine) ${ADMINS} permission=none` },
  { method: 'POST', path: '/auth-api/login', policy: 'public' },
  { method: 'POST', path: '/auth-api/logout', policy: 'public' },
  // the caller's own app factors, logins only: reading them and enrolling an authenticator app
  // stay open to a role that must enrol first (mfaRequiredForRoles); the sign-in's factor (a code
  // of the app, or a recovery code) is open while it is pending; the rest needs a complete login
  { method: 'GET', path: '/auth-api/mfa', policy: 'authenticated(user) permission=none mfaEnrollment' },
  { method: 'POST', path: '/auth-api/mfa/recovery', policy: 'authenticated(user) permission=none during2FA' },
  { method: 'POST', path: '/auth-api/mfa/recovery/regenerate', policy: 'authenticated(user) permission=none' },
  { method: 'DELETE', path: '/auth-api/mfa/totp', policy: 'authenticated(user) permission=none' },
  { method: 'POST', path: '/auth-api/mfa/totp/confirm', policy: 'authenticated(user) permission=none mfaEnrollment' },
  { method: 'POST', path: '/auth-api/mfa/totp/setup', policy: 'authenticated(user) permission=none mfaEnrollment' },
  { method: 'POST', path: '/auth-api/mfa/totp/verify', policy: 'authenticated(user) permission=none during2FA' },
  // the caller's own remembered consents of the OpenID Connect provider, logins only (scoped to the
  // caller in the service)
  { method: 'GET', path: '/auth-api/oauth/consents', policy: 'authenticated(user) permission=none' },
  { method: 'DELETE', path: '/auth-api/oauth/consents/:id', policy: 'authenticated(user) permission=none' },
  // passkeys: the caller's own, in its store; enrolment stays open to a user whose role must
  // still enrol an app factor; a passkey as a pending sign-in's second factor is open while it is
  // pending. Sign-in is public: the passkey's signature is the credential
  { method: 'GET', path: '/auth-api/passkeys', policy: 'authenticated(user) permission=none' },
  { method: 'DELETE', path: '/auth-api/passkeys/:id', policy: 'authenticated(user) permission=none' },
  { method: 'PATCH', path: '/auth-api/passkeys/:id', policy: 'authenticated(user) permission=none' },
  { method: 'POST', path: '/auth-api/passkeys/2fa/options', policy: 'authenticated(user) permission=none during2FA' },
  { method: 'POST', path: '/auth-api/passkeys/2fa/verify', policy: 'authenticated(user) permission=none during2FA' },
  { method: 'POST', path: '/auth-api/passkeys/login/options', policy: 'public' },
  { method: 'POST', path: '/auth-api/passkeys/login/verify', policy: 'public' },
  { method: 'POST', path: '/auth-api/passkeys/register/options', policy: 'authenticated(user) permission=none mfaEnrollment' },
  { method: 'POST', path: '/auth-api/passkeys/register/verify', policy: 'authenticated(user) permission=none mfaEnrollment' },
  // the rules a new password must meet, for a sign-up or password form
  { method: 'GET', path: '/auth-api/password-policy', policy: 'public' },
  // passwordless sign-in: the code or link sent to the address is the credential
  { method: 'POST', path: '/auth-api/passwordless/complete', policy: 'public' },
  { method: 'POST', path: '/auth-api/passwordless/start', policy: 'public' },
  // the caller's own permissions (read afresh per request)
  { method: 'GET', path: '/auth-api/permissions', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'GET', path: '/auth-api/permissions/:name', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'GET', path: '/auth-api/publickey', policy: 'public' },
  // realtime channel: pusher-js authorizes a channel of the caller's store, or the connection as
  // the caller; the provider's webhook is checked by its signature
  { method: 'POST', path: '/auth-api/realtime/auth', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'POST', path: '/auth-api/realtime/user-auth', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'POST', path: '/auth-api/realtime/webhook', policy: 'public' },
  // the refresh token is the credential
  { method: 'POST', path: '/auth-api/refresh', policy: 'public' },
  // own sessions only; the service scopes them to the caller. A key ends its creator's logins
  // (it is none of them) but does not list them
  { method: 'DELETE', path: '/auth-api/sessions', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'GET', path: '/auth-api/sessions', policy: 'authenticated(user) permission=none' },
  { method: 'DELETE', path: '/auth-api/sessions/:id', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'GET', path: '/auth-api/sso/callback', policy: 'public' },
  { method: 'GET', path: '/auth-api/sso/login', policy: 'public' },
  { method: 'POST', path: '/auth-api/users', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.create publicWhen=userRegisterIsPublic` },
  // API keys: managed with a person's login; the plaintext is shown once
  { method: 'GET', path: '/auth-api/v1/apikeys', policy: 'authenticated(user,apiKey) permission=apikeys.list' },
  { method: 'POST', path: '/auth-api/v1/apikeys', policy: 'authenticated(user) permission=apikeys.create' },
  { method: 'DELETE', path: '/auth-api/v1/apikeys/:id', policy: 'authenticated(user) permission=apikeys.delete' },
  // the audit log: read, exported and checked by the store's administrators (a super administrator: any store)
  { method: 'GET', path: '/auth-api/v1/auditlogs', policy: `authenticated(user,apiKey) ${ADMINS} permission=auditLog.read saasAdminTargetsAnyStore` },
  { method: 'GET', path: '/auth-api/v1/auditlogs/export', policy: `authenticated(user,apiKey) ${ADMINS} permission=auditLog.read saasAdminTargetsAnyStore` },
  { method: 'GET', path: '/auth-api/v1/auditlogs/verify', policy: `authenticated(user,apiKey) ${ADMINS} permission=auditLog.read saasAdminTargetsAnyStore` },
  { method: 'GET', path: '/auth-api/v1/briefstores', policy: 'public' },
  // OAuth clients of the OpenID Connect provider: a store's administrators for its clients, a
  // SaaS administrator for any store it targets; a secret is in the creation's and the
  // rotation's answers only
  { method: 'GET', path: '/auth-api/v1/oauthclients', policy: `authenticated(user,apiKey) ${ADMINS} permission=oauthclients.read saasAdminTargetsAnyStore` },
  { method: 'POST', path: '/auth-api/v1/oauthclients', policy: `authenticated(user,apiKey) ${ADMINS} permission=oauthclients.write saasAdminTargetsAnyStore` },
  { method: 'DELETE', path: '/auth-api/v1/oauthclients/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=oauthclients.write saasAdminTargetsAnyStore` },
  { method: 'GET', path: '/auth-api/v1/oauthclients/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=oauthclients.read saasAdminTargetsAnyStore` },
  { method: 'PATCH', path: '/auth-api/v1/oauthclients/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=oauthclients.write saasAdminTargetsAnyStore` },
  { method: 'POST', path: '/auth-api/v1/oauthclients/:id/rotate-secret', policy: `authenticated(user,apiKey) ${ADMINS} permission=oauthclients.write saasAdminTargetsAnyStore` },
  // the console's overview of the targeted store (counts of users and sessions, sign-ins from
  // the audit log): its administrators; a SaaS administrator any store it targets
  { method: 'GET', path: '/auth-api/v1/overview', policy: `authenticated(user,apiKey) ${ADMINS} permission=overview.read saasAdminTargetsAnyStore` },
  // grants: store admins in their store, SaaS admins at root; never a permission the caller
  // does not hold, only over roles and users it outranks (checked in the service)
  { method: 'GET', path: '/auth-api/v1/permissiongrants', policy: `authenticated(user,apiKey) ${ADMINS} permission=permissiongrants.read` },
  { method: 'POST', path: '/auth-api/v1/permissiongrants', policy: `authenticated(user,apiKey) ${ADMINS} permission=permissiongrants.write` },
  { method: 'DELETE', path: '/auth-api/v1/permissiongrants/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=permissiongrants.write` },
  { method: 'GET', path: '/auth-api/v1/permissiongrants/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=permissiongrants.read` },
  { method: 'POST', path: '/auth-api/v1/registerstoreowner', policy: 'public' },
  { method: 'POST', path: '/auth-api/v1/registerstoreuser', policy: 'public' },
  // the targeted store's record, read and changed by its administrators and by a SaaS
  // administrator targeting it; `isActive` by SaaS administrators only (checked in the service)
  { method: 'GET', path: '/auth-api/v1/store', policy: `authenticated(user,apiKey) ${ADMINS} permission=store.read saasAdminTargetsAnyStore` },
  { method: 'PATCH', path: '/auth-api/v1/store', policy: `authenticated(user,apiKey) ${ADMINS} permission=store.update saasAdminTargetsAnyStore` },
  // every store, for the SaaS level only (a caller of another store is refused in the service)
  { method: 'GET', path: '/auth-api/v1/stores', policy: 'authenticated(user,apiKey) roles=superAdmin,saasAdmin permission=stores.list' },
  // user groups: admin-level users; global groups changed by SaaS admins only (in the service)
  { method: 'GET', path: '/auth-api/v1/usergroupmembers', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroupmembers.read` },
  { method: 'POST', path: '/auth-api/v1/usergroupmembers', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroupmembers.write` },
  { method: 'DELETE', path: '/auth-api/v1/usergroupmembers/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroupmembers.write` },
  { method: 'GET', path: '/auth-api/v1/usergroupmembers/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroupmembers.read` },
  { method: 'PATCH', path: '/auth-api/v1/usergroupmembers/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroupmembers.write` },
  { method: 'GET', path: '/auth-api/v1/usergroups', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroups.read` },
  { method: 'POST', path: '/auth-api/v1/usergroups', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroups.write` },
  { method: 'DELETE', path: '/auth-api/v1/usergroups/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroups.write` },
  { method: 'GET', path: '/auth-api/v1/usergroups/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroups.read` },
  { method: 'PATCH', path: '/auth-api/v1/usergroups/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=usergroups.write` },
  { method: 'GET', path: '/auth-api/v1/users', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.list` },
  { method: 'DELETE', path: '/auth-api/v1/users/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.delete` },
  // any user: admins read and change users of the store, a user only itself (checked in the service)
  { method: 'GET', path: '/auth-api/v1/users/:id', policy: 'authenticated(user,apiKey) permission=users.read' },
  { method: 'PATCH', path: '/auth-api/v1/users/:id', policy: 'authenticated(user,apiKey) permission=users.update' },
  // a user's sessions (devices): admins of the store, only over users they outrank (checked in
  // the service); ending them is a change to the user, as a deactivation is
  // an administrator who outranks the user resets its app factors (never its own) and ends its sessions
  { method: 'DELETE', path: '/auth-api/v1/users/:id/mfa', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.update` },
  // a user's remembered consents (OpenID Connect provider grants): admins who outrank the user
  // (checked in the service); revoking one is a change to the user
  { method: 'GET', path: '/auth-api/v1/users/:id/oauthconsents', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.read` },
  { method: 'DELETE', path: '/auth-api/v1/users/:id/oauthconsents/:consentId', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.update` },
  { method: 'DELETE', path: '/auth-api/v1/users/:id/sessions', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.update` },
  { method: 'GET', path: '/auth-api/v1/users/:id/sessions', policy: `authenticated(user,apiKey) ${ADMINS} permission=users.read` },
  // webhooks: a store's administrators for its endpoints, a SaaS administrator for any store it
  // targets; the secret is in the creation's and the rotation's answers only
  { method: 'GET', path: '/auth-api/v1/webhooks', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.read saasAdminTargetsAnyStore` },
  { method: 'POST', path: '/auth-api/v1/webhooks', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.write saasAdminTargetsAnyStore` },
  { method: 'DELETE', path: '/auth-api/v1/webhooks/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.write saasAdminTargetsAnyStore` },
  { method: 'GET', path: '/auth-api/v1/webhooks/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.read saasAdminTargetsAnyStore` },
  { method: 'PATCH', path: '/auth-api/v1/webhooks/:id', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.write saasAdminTargetsAnyStore` },
  { method: 'GET', path: '/auth-api/v1/webhooks/:id/deliveries', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.read saasAdminTargetsAnyStore` },
  { method: 'POST', path: '/auth-api/v1/webhooks/:id/deliveries/:deliveryId/retry', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.write saasAdminTargetsAnyStore` },
  { method: 'POST', path: '/auth-api/v1/webhooks/:id/rotate-secret', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.write saasAdminTargetsAnyStore` },
  { method: 'POST', path: '/auth-api/v1/webhooks/:id/test', policy: `authenticated(user,apiKey) ${ADMINS} permission=webhooks.write saasAdminTargetsAnyStore` },
  // internal: other services, with a machine token
  { method: 'POST', path: '/auth-api/validateapikey', policy: 'authenticated(machine) permission=none' },
  // verification: the email and mobile flows are public (same answer for unknown identifiers);
  // the second factors need the login whose factor is pending
  { method: 'POST', path: '/auth-api/verification-services/:flow/complete', policy: 'public' },
  { method: 'POST', path: '/auth-api/verification-services/:flow/start', policy: 'public' },
  { method: 'POST', path: '/auth-api/verification-services/email-2factor-verification/complete', policy: 'authenticated(user) permission=none during2FA' },
  { method: 'POST', path: '/auth-api/verification-services/email-2factor-verification/start', policy: 'authenticated(user) permission=none during2FA' },
  { method: 'POST', path: '/auth-api/verification-services/mobile-2factor-verification/complete', policy: 'authenticated(user) permission=none during2FA' },
  { method: 'POST', path: '/auth-api/verification-services/mobile-2factor-verification/start', policy: 'authenticated(user) permission=none during2FA' },
  // SSE stream: anonymous clients may hold public topics; the event channel checks the
  // credential per topic (the same rules as the Socket.IO namespace)
  { method: 'GET', path: '/events/:name/stream', policy: 'public' },
  { method: 'GET', path: '/health/live', policy: 'public' },
  { method: 'GET', path: '/health/ready', policy: 'public' },
  // its own credential: METRICS_TOKEN, or an internal port (METRICS_PORT)
  { method: 'GET', path: '/metrics', policy: 'public' },
  // the caller's own in-app notifications in its store
  { method: 'GET', path: '/notifications', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'POST', path: '/notifications/:id/read', policy: 'authenticated(user,apiKey) permission=none' },
  { method: 'GET', path: '/notifications/unread', policy: 'authenticated(user,apiKey) permission=none' },
];

const PUBLIC_PATHS = [
  'GET /auth-api/.well-known/jwks.json',
  'GET /auth-api/.well-known/openid-configuration',
  'POST /auth-api/refresh',
  'GET /auth-api/auth/:provider',
  'GET /auth-api/auth/:provider/callback',
  'POST /auth-api/auth/:provider/callback',
  'POST /auth-api/auth/social-login-result',
  'GET /auth-api/sso/login',
  'GET /auth-api/sso/callback',
  'GET /auth-api/avatars/:file',
  'GET /auth-api/bucket/userAvatars/download/key/:accessKey',
  'GET /auth-api/challenge',
  'POST /auth-api/login',
  'POST /auth-api/logout',
  'POST /auth-api/passkeys/login/options',
  'POST /auth-api/passkeys/login/verify',
  'POST /auth-api/passwordless/start',
  'POST /auth-api/passwordless/complete',
  'GET /auth-api/password-policy',
  'GET /auth-api/publickey',
  'POST /auth-api/realtime/webhook',
  'GET /auth-api/v1/briefstores',
  'POST /auth-api/v1/registerstoreowner',
  'POST /auth-api/v1/registerstoreuser',
  'GET /events/:name/stream',
  'POST /auth-api/verification-services/:flow/complete',
  'POST /auth-api/verification-services/:flow/start',
  'GET /health/live',
  'GET /health/ready',
  'GET /metrics',
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
