import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError } from '../common/errors.js';
import { Authenticated, Public } from '../common/policy.js';
import type { ContextRequest } from '../common/request-context.js';
import { AppConfig } from '../config/app-config.js';
import { SAAS_ROLES } from '../user/roles.js';
import { AuthenticationService } from './authentication.service.js';

// The one global guard. It decides per request from the route's declared policy; nothing
// about an allow decision is cached.
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authentication: AuthenticationService,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride(Public, targets)) return true;
    const policy = this.reflector.getAllAndOverride(Authenticated, targets);
    if (!policy) throw new AppError('Forbidden', 'route has no policy'); // PolicyAudit stops this at boot
    const req = context.switchToHttp().getRequest<ContextRequest>();

    if (policy.publicWhen && this.config.settings[policy.publicWhen]) {
      const session = await this.authentication.tryAuthenticate(req);
      // Open to anonymous callers, but a token still counts only in its own store.
      if (session && session.storeId !== req.ctx.store!.id && !session.roles.includes(SAAS_ROLES.superAdmin)) {
        throw new AppError('TenantMismatch', 'the token was issued for another store');
      }
      req.ctx.session = session;
      return true;
    }
    // API keys and machine tokens arrive later; until then only user sessions exist.
    if (!policy.principals.user) throw new AppError('PrincipalNotAccepted', 'this route does not accept user sessions');

    let session, token;
    try {
      ({ session, token } = await this.authentication.authenticate(req, { bucketToken: policy.bucketToken }));
    } catch (error) {
      if (policy.noLoginShape && error instanceof AppError && error.status === 401) throw new AppError('NoLoginFound');
      throw error;
    }
    const isSuperAdmin = session.roles.includes(SAAS_ROLES.superAdmin);
    if (session.storeId !== req.ctx.store!.id && !isSuperAdmin) {
      throw new AppError('TenantMismatch', 'the token was issued for another store');
    }
    if (policy.roles && !isSuperAdmin && !session.roles.some((r) => policy.roles!.includes(r))) {
      throw new AppError('Forbidden', 'your role does not allow this');
    }
    req.ctx.session = session;
    req.ctx.accessToken = token;
    return true;
  }
}
