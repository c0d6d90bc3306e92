import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { PermissionCheckService } from '../access/permission-check.service.js';
import { principalOf } from '../../kernel/request-context.js';
import { AppError } from '../../kernel/errors.js';
import { Authenticated, Public, type AuthPolicy } from '../../kernel/policy.js';
import type { ContextRequest, RequestContext } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { SessionData } from '../../kernel/principal.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import { CallerResolver } from './caller-resolver.js';
import { AccessSection } from '../access/access.settings.js';

// The one global guard. It decides per request from the route's declared policy; nothing
// about an allow decision is cached. Who is calling, for which store, is the CallerResolver's
// answer (the same for the event channel); the route's roles and permission are decided here.
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly callers: CallerResolver,
    private readonly config: AppConfig,
    private readonly permissions: PermissionCheckService,
  ) {}

  // Each handler's policy as its decorators declare it (read once: they do not change).
  private readonly policies = new WeakMap<object, AuthPolicy | 'public' | undefined>();

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const policy = this.policyOf(context);
    if (policy === 'public') return true;
    if (!policy) throw new AppError('Forbidden', 'route has no policy'); // PolicyAudit stops this at boot
    const req = context.switchToHttp().getRequest<ContextRequest>();

    try {
      const caller = await this.callers.resolveRequest(req, policy);
      const ctx = req.ctx;
      // The tenant: the targeted store, or an API key's own when none was named.
      ctx.store = caller.store;
      if (caller.machine !== undefined) {
        ctx.machine = caller.machine;
        return this.permit(req, policy);
      }
      // Open to anyone at the moment (publicWhen): a login is known, but no role is asked of it.
      if (caller.open) {
        ctx.session = caller.session;
        return true;
      }
      if (caller.token !== undefined) ctx.accessToken = caller.token;
      return this.admit(ctx, policy, caller.session!) && this.permit(req, policy);
    } catch (error) {
      // `/currentuser` tells a caller without a usable login (bad token or key, or one of another
      // store) only `No login found`: the client then logs in to the store it targets.
      const noLogin = error instanceof AppError && (error.status === 401 || error.errCode === 'TenantMismatch' || error.errCode === 'StoreInactive');
      if (policy.noLoginShape && noLogin) throw new AppError('NoLoginFound');
      throw error;
    }
  }

  private policyOf(context: ExecutionContext): AuthPolicy | 'public' | undefined {
    const handler = context.getHandler();
    if (this.policies.has(handler)) return this.policies.get(handler);
    const targets = [handler, context.getClass()];
    const policy = this.reflector.getAllAndOverride(Public, targets) ? 'public' : this.reflector.getAllAndOverride(Authenticated, targets);
    this.policies.set(handler, policy);
    return policy;
  }

  // The route's roles (a super administrator's login passes them all, an API key's does not).
  private admit(ctx: RequestContext, policy: AuthPolicy, session: SessionData): boolean {
    const pass = (session.principal !== 'apiKey' && session.roles.includes(SAAS_ROLES.superAdmin)) || this.permissionDecides(policy);
    if (policy.roles && !pass && !session.roles.some((r) => policy.roles!.includes(r))) {
      throw new AppError('Forbidden', 'your role does not allow this');
    }
    ctx.session = session;
    return true;
  }

  // With `pbacIsActive` a route's permission decides in place of its role list (the service's
  // route permissions are held by the roles the routes name, see PermissionCatalogue.service);
  // without it the role list decides, and a permission is checked only on a route that names no
  // roles.
  private permissionDecides(policy: AuthPolicy): boolean {
    return !!policy.permission && this.config.section(AccessSection).pbacIsActive;
  }

  // A route's permission, decided per request by the one `can()` (deny by default). A route that
  // asks none (its roles decided, or nothing does) is answered without waiting.
  private permit(req: ContextRequest, policy: AuthPolicy): boolean | Promise<boolean> {
    const permission = policy.permission;
    if (!permission || (policy.roles && !this.permissionDecides(policy))) return true;
    return this.permissions.can(principalOf(req.ctx), permission).then((allowed) => {
      if (!allowed) throw new AppError('PermissionDenied', `you do not have the permission "${permission}"`);
      return true;
    });
  }
}
