// The service's tokens and API keys checked in a NestJS (or Express) service.
export { SvcAuthModule, SVC_AUTH_OPTIONS } from './module.js';
export { SvcAuthGuard } from './guard.js';
export { Authenticated, PERMISSIONS, Principal, Public, RequirePermission, Roles, ROLES } from './decorators.js';
export { SvcAuth, type CredentialSource, type Introspection } from './svc-auth.js';
export { SvcAuthError, type SvcErrorBody } from './errors.js';
export { DEFAULT_CACHE_SECONDS, type SvcAuthOptions } from './options.js';
export type { SvcPrincipal } from './principal.js';
export { requirePermission, requireRoles, svcAuthMiddleware, type SvcMiddleware, type SvcRequest } from './express.js';
