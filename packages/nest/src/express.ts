import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcAuthError } from './errors.js';
import type { SvcAuthOptions } from './options.js';
import type { SvcPrincipal } from './principal.js';
import { SvcAuth } from './svc-auth.js';

// An Express (or Connect) request as these middlewares use it.
export type SvcRequest = IncomingMessage & { originalUrl?: string; principal?: SvcPrincipal; svcAuth?: SvcAuth };
export type SvcMiddleware = (req: SvcRequest, res: ServerResponse, next: (error?: unknown) => void) => void;

// For services without Nest: `app.use(svcAuthMiddleware({ baseUrl, apiKey }))` sets
// `req.principal` or answers the service's 401 (403 TenantMismatch with `store`). Put it after the
// routes that stay public. Takes the options or an SvcAuth already made (one per process: its
// caches are shared).
export function svcAuthMiddleware(options: SvcAuthOptions | SvcAuth): SvcMiddleware {
  const auth = options instanceof SvcAuth ? options : new SvcAuth(options);
  return (req, res, next) => {
    auth.authenticate(req).then(
      (principal) => {
        req.principal = principal;
        req.svcAuth = auth;
        next();
      },
      (error: unknown) => refuse(res, error, next),
    );
  };
}

// After svcAuthMiddleware: every one of these permissions, as the service answers them.
export function requirePermission(...names: string[]): SvcMiddleware {
  return guarded((auth, principal, req) => auth.requirePermissions(principal, names, req));
}

// After svcAuthMiddleware: any one of these roles.
export function requireRoles(...roles: string[]): SvcMiddleware {
  return guarded((auth, principal, req) => auth.requireRoles(principal, roles, req));
}

function guarded(check: (auth: SvcAuth, principal: SvcPrincipal, req: SvcRequest) => Promise<void>): SvcMiddleware {
  return (req, res, next) => {
    const { principal, svcAuth } = req;
    if (!principal || !svcAuth) return refuse(res, SvcAuthError.unauthorized('no access token'), next);
    check(svcAuth, principal, req).then(
      () => next(),
      (error: unknown) => refuse(res, error, next),
    );
  };
}

// The service's envelope for its refusals; anything else is the application's error handler's.
function refuse(res: ServerResponse, error: unknown, next: (error?: unknown) => void): void {
  if (!(error instanceof SvcAuthError)) return next(error);
  res.statusCode = error.getStatus();
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(error.body));
}
