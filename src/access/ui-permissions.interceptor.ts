import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, switchMap, type Observable } from 'rxjs';
import { Envelope } from '../common/envelope.js';
import type { ContextRequest } from '../common/request-context.js';
import { AccessService, principalOf } from './access.service.js';

// Fills a list response's `uiPermissions` with the caller's permissions, read for this request.
@Injectable()
export class UiPermissionsInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || this.reflector.get(Envelope, context.getHandler())?.action !== 'list') return next.handle();
    const req = context.switchToHttp().getRequest<ContextRequest>();
    if (!req.ctx.session && !req.ctx.machine) return next.handle();
    return from(this.access.uiPermissions(principalOf(req.ctx)).then((names) => (req.ctx.uiPermissions = names))).pipe(switchMap(() => next.handle()));
  }
}
