import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeyService } from '../apikey/api-key.service.js';
import { AppError } from '../common/errors.js';
import { Authenticated, Public, type AuthPolicy } from '../common/policy.js';
import type { ContextRequest } from '../common/request-context.js';
import { AppConfig } from '../config/app-config.js';
import { MachineAuthService } from '../m2m/machine-auth.service.js';
import type { SessionData } from '../session/session.types.js';
import { StoreService } from '../store/store.service.js';
import { SAAS_ROLES } from '../user/roles.js';
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
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride(Public, targets)) return true;
    const policy = this.reflector.getAllAndOverride(Authenticated, targets);
    if (!policy) throw new AppError('Forbidden', 'route has no policy'); // PolicyAudit stops this at boot
    const req = context.switchToHttp().getRequest<ContextRequest>();

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
      return this.admit(req, policy, session, false);
    }

    if (policy.principals.machine && (this.machines.hasToken(req) || !policy.principals.user)) {
      req.ctx.machine = await this.machines.authenticate(req);
      return true;
    }

    if (policy.publicWhen && this.config.settings[policy.publicWhen]) {
      const session = await this.authentication.tryAuthenticate(req);
      // Open to anonymous callers, but a token still counts only in its own store.
      if (session) this.checkTenant(req, session);
      req.ctx.session = session;
      return true;
    }
    if (!policy.principals.user) throw new AppError('PrincipalNotAccepted', 'this route does not accept user sessions');

    let session, token;
    try {
      ({ session, token } = await this.authentication.authenticate(req, { bucketToken: policy.bucketToken }));
    } catch (error) {
      if (policy.noLoginShape && error instanceof AppError && error.status === 401) throw new AppError('NoLoginFound');
      throw error;
    }
    this.checkTenant(req, session);
    req.ctx.accessToken = token;
    return this.admit(req, policy, session, true);
  }

  // A token is valid only in the store it was issued for, except a super administrator's.
  private checkTenant(req: ContextRequest, session: SessionData): void {
    if (session.storeId !== req.ctx.store!.id && !session.roles.includes(SAAS_ROLES.superAdmin)) {
      throw new AppError('TenantMismatch', 'the token was issued for another store');
    }
  }

  private admit(req: ContextRequest, policy: AuthPolicy, session: SessionData, superAdminPasses: boolean): boolean {
    const pass = superAdminPasses && session.roles.includes(SAAS_ROLES.superAdmin);
    if (policy.roles && !pass && !session.roles.some((r) => policy.roles!.includes(r))) {
      throw new AppError('Forbidden', 'your role does not allow this');
    }
    req.ctx.session = session;
    return true;
  }
}
