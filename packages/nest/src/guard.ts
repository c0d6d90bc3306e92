import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Authenticated, PERMISSIONS, Public, ROLES } from './decorators.js';
import type { SvcPrincipal } from './principal.js';
import { SvcAuth, type CredentialSource } from './svc-auth.js';

type Request = CredentialSource & { principal?: SvcPrincipal };

interface Policy {
  roles: readonly string[];
  permissions: readonly string[];
}

// The one global guard: `@Public()` routes are open; every other route (with or without
// `@Authenticated()`) needs a valid caller, then the roles and permissions it names. Decided per
// request; only the service's answers are reused (SvcAuth).
@Injectable()
export class SvcAuthGuard implements CanActivate {
  // Each handler's policy as its decorators declare it (read once: they do not change).
  private readonly policies = new WeakMap<object, Policy | 'public'>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(SvcAuth) private readonly auth: SvcAuth,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    // Other transports (microservices, websockets) carry no HTTP credential.
    if (context.getType() !== 'http') return true;
    const policy = this.policyOf(context);
    if (policy === 'public') return true;
    const req = context.switchToHttp().getRequest<Request>();
    const principal = await this.auth.authenticate(req);
    await this.auth.requireRoles(principal, policy.roles, req);
    await this.auth.requirePermissions(principal, policy.permissions, req);
    req.principal = principal;
    return true;
  }

  private policyOf(context: ExecutionContext): Policy | 'public' {
    const handler = context.getHandler();
    const known = this.policies.get(handler);
    if (known) return known;
    const targets = [handler, context.getClass()];
    // `@Authenticated()` on a handler closes a route its controller declared public.
    const open = this.reflector.getAllAndOverride(Public, targets) && !this.reflector.get(Authenticated, handler);
    const policy: Policy | 'public' = open
      ? 'public'
      : { roles: this.reflector.getAllAndOverride(ROLES, targets) ?? [], permissions: this.reflector.getAllAndOverride(PERMISSIONS, targets) ?? [] };
    this.policies.set(handler, policy);
    return policy;
  }
}
