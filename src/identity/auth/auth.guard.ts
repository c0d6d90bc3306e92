import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AccessService } from '../access/access.service.js';
import { principalOf } from '../../kernel/request-context.js';
import { ApiKeyService } from '../apikey/api-key.service.js';
import { AppError } from '../../kernel/errors.js';
import { Authenticated, Public, type AuthPolicy } from '../../kernel/policy.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { MachineAuthService } from '../m2m/machine-auth.service.js';
import type { SessionData } from '../../kernel/principal.js';
import { StoreService } from '../store/store.service.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import { ROOT_CODENAME } from '../../kernel/tenant.js';
import { VerificationGate } from '../verification/verification.gate.js';
import { AuthenticationService } from './authentication.service.js';

// The one global guard. It decides per request from the route's declared policy; nothing
// about an allow decision is cached.
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authentication: AuthenticationService,
    private readonly apiKeys: ApiKeyService,
    private readonly machines: MachineAuthService,
    private readonly stores: StoreService,
    private readonly config: AppConfig,
    private readonly verification: VerificationGate,
    private readonly access: AccessService,
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
      return await this.authenticate(req, policy);
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

  private async authenticate(req: ContextRequest, policy: AuthPolicy): Promise<boolean> {
    // An API key, where one is sent, is the credential: no JWT or cookie is looked at.
    const apiKey = this.authentication.apiKeyFrom(req);
    if (apiKey !== undefined) {
      if (!policy.principals.apiKey) throw new AppError('PrincipalNotAccepted', 'this route does not accept API keys');
      const session = await this.apiKeys.authenticate(apiKey);
      // An external caller's tenant is the key's; naming another store is refused.
      if (session.storeId !== req.ctx.store!.id) {
        if (req.ctx.storeTargeted) throw new AppError('TenantMismatch', 'the API key belongs to another store');
        req.ctx.store = (await this.stores.findById(session.storeId)) ?? undefined;
        if (!req.ctx.store) throw new AppError('Unauthorized', 'invalid or expired API key');
      }
      // The tenant is now the key's own store.
      if (!req.ctx.store!.isActive) throw storeInactive();
      return this.admit(req, policy, session, false) && this.permit(req, policy);
    }

    if (policy.principals.machine && (this.machines.hasToken(req) || !policy.principals.user)) {
      req.ctx.machine = await this.machines.authenticate(req);
      return this.permit(req, policy);
    }

    if (policy.publicWhen && this.config.settings[policy.publicWhen]) {
      const login = await this.authentication.tryAuthenticate(req);
      // Open to anonymous callers, but a token still counts only in its own store, of an active
      // store, and only once its second factors are done.
      if (login) {
        await this.checkTenant(req, login.session);
        await this.assertStoreActive(req, login.session);
        this.verification.checkRequest(login.session, routeOf(req), policy, login.pending);
      }
      req.ctx.session = login?.session;
      return true;
    }
    if (!policy.principals.user) throw new AppError('PrincipalNotAccepted', 'this route does not accept user sessions');

    // The second-factor routes tell a sign-in ended by too many wrong codes from any other end.
    const { session, token, pending } = await this.authentication.authenticate(req, { bucketToken: policy.bucketToken, secondFactorRoute: policy.during2FA && !policy.noLoginShape });
    // A login in its own store (nearly every request) is decided without waiting.
    if (session.storeId === req.ctx.store!.id) {
      if (!req.ctx.store!.isActive) throw storeInactive();
    } else {
      await this.checkTenant(req, session, policy);
      await this.assertStoreActive(req, session);
    }
    req.ctx.accessToken = token;
    return this.admit(req, policy, session, true, pending) && this.permit(req, policy);
  }

  // A token is valid only in the store it was issued for, except a super administrator's (and a
  // SaaS administrator's on the routes that say so).
  // The answer says how to fix the call: which header, with the token's own store.
  private async checkTenant(req: ContextRequest, session: SessionData, policy?: AuthPolicy): Promise<void> {
    if (session.storeId === req.ctx.store!.id || session.roles.includes(SAAS_ROLES.superAdmin)) return;
    const own = await this.stores.findById(session.storeId);
    const saasAdmin = policy?.saasAdminTargetsAnyStore && own?.codename === ROOT_CODENAME && session.roles.includes(SAAS_ROLES.saasAdmin);
    if (!saasAdmin) {
      const header = `${this.config.env.PROJECT_CODENAME}-store-codename`;
      const targeted = req.ctx.storeTargeted ? `store "${req.ctx.store!.codename}"` : `no store (root is assumed)`;
      throw new AppError(
        'TenantMismatch',
        own ? `the token was issued for store "${own.codename}" but the request targets ${targeted}: send the header ${header}: ${own.codename}` : 'the token was issued for another store',
      );
    }
  }

  // A deactivated store's sessions and keys stop at once: the store (the tenant's, or the
  // session's own for a super administrator elsewhere) comes from the store cache, which every
  // replica empties of a store as soon as the database announces its change (StoreCache).
  private async assertStoreActive(req: ContextRequest, session: SessionData): Promise<void> {
    const store = session.storeId === req.ctx.store!.id ? req.ctx.store : await this.stores.findById(session.storeId);
    if (!store?.isActive) throw storeInactive();
  }

  private admit(req: ContextRequest, policy: AuthPolicy, session: SessionData, superAdminPasses: boolean, tokenPending = false): boolean {
    // API keys and machine tokens have no second factor; a login's pending one (or a token issued
    // while it was) closes the route before its role is looked at.
    this.verification.checkRequest(session, routeOf(req), policy, tokenPending);
    const pass = (superAdminPasses && session.roles.includes(SAAS_ROLES.superAdmin)) || this.permissionDecides(policy);
    if (policy.roles && !pass && !session.roles.some((r) => policy.roles!.includes(r))) {
      throw new AppError('Forbidden', 'your role does not allow this');
    }
    req.ctx.session = session;
    return true;
  }

  // With `pbacIsActive` a route's permission decides in place of its role list (the service's
  // route permissions are held by the roles the routes name, see PermissionCatalogue.service);
  // without it the role list decides, and a permission is checked only on a route that names no
  // roles.
  private permissionDecides(policy: AuthPolicy): boolean {
    return !!policy.permission && this.config.settings.pbacIsActive;
  }

  // A route's permission, decided per request by the one `can()` (deny by default). A route that
  // asks none (its roles decided, or nothing does) is answered without waiting.
  private permit(req: ContextRequest, policy: AuthPolicy): boolean | Promise<boolean> {
    const permission = policy.permission;
    if (!permission || (policy.roles && !this.permissionDecides(policy))) return true;
    return this.access.can(principalOf(req.ctx), permission).then((allowed) => {
      if (!allowed) throw new AppError('PermissionDenied', `you do not have the permission "${permission}"`);
      return true;
    });
  }
}

function storeInactive(): AppError {
  return new AppError('StoreInactive', 'the store of this login is deactivated');
}

// The matched route, for the 2FA message (`errMsg_getUsersByIdRequiresEmail2FA`).
function routeOf(req: ContextRequest): { method: string; path: string } {
  return { method: req.method, path: String((req.route as { path?: string } | undefined)?.path ?? req.path) };
}
