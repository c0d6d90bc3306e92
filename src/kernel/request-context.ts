import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal, SessionData } from './principal.js';
import type { Tenant } from './tenant.js';

// What one request knows about itself, attached to the request object: request-scoped by
// construction. Services receive the parts they need as arguments (the caller first). There is
// deliberately no AsyncLocalStorage: once one is in use, Node runs its hooks on every promise of
// the process, which cost about a seventh of an authenticated request's CPU.
export interface RequestContext {
  requestId: string;
  startedAt: bigint;
  // Scheme and host the request was sent to (the scheme follows TRUST_PROXY).
  origin: string;
  // The client's address (following TRUST_PROXY) and user agent, for the audit log.
  ip: string | null;
  userAgent: string | null;
  // The targeted store (tenant), resolved by TenancyMiddleware.
  store?: Tenant;
  // Whether the request named its store (header, query or body), rather than defaulting to root.
  storeTargeted?: boolean;
  // The calling service, when a machine token authenticated the request.
  machine?: string;
  // The caller's login, set by AuthGuard on authenticated routes.
  session?: SessionData;
  // The access token that authenticated the request (echoed by /currentuser).
  accessToken?: string;
  // The caller's permissions, reported in list envelopes (set by the access module).
  uiPermissions?: string[];
}

export type ContextRequest = Request & { ctx: RequestContext; rawBody?: Buffer };

export const Ctx = createParamDecorator((_: unknown, host: ExecutionContext): RequestContext => {
  return host.switchToHttp().getRequest<ContextRequest>().ctx;
});

export { elapsedMs } from '../platform/clock/elapsed.js';

// The caller of a request as decisions see it.
export function principalOf(ctx: RequestContext): Principal {
  if (ctx.machine) return { kind: 'machine', machine: ctx.machine, storeId: ctx.store?.id, roles: [] };
  const s = ctx.session!;
  if (s.principal === 'apiKey') return { kind: 'apiKey', storeId: s.storeId, userId: s.userId, roles: s.roles, permissions: s.permissions ?? [] };
  return { kind: 'user', storeId: s.storeId, userId: s.userId, roles: s.roles };
}
