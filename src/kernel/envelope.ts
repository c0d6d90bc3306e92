import { createHash } from 'node:crypto';
import { applyDecorators, Injectable, UseInterceptors, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { from, map, switchMap, type Observable } from 'rxjs';
import { AppConfig } from '../platform/config/app-config.js';
import type { Paging } from './paging.js';
import { elapsedMs, type ContextRequest, type RequestContext } from './request-context.js';

export interface EnvelopeSpec {
  dataName: string;
  action: string;
}

// A business route's envelope, as @Envelope declared it (the API document reads it too).
export const EnvelopeSpecOf = Reflector.createDecorator<EnvelopeSpec>();

// Marks a business route: its result is wrapped in the response envelope. The interceptor is
// the route's own rather than global: a route without any interceptor is called by Nest
// directly, without the RxJS pipeline every interceptor brings (about a tenth of what an
// authenticated request allocated, on routes such as /currentuser that have no envelope).
export function Envelope(spec: EnvelopeSpec): MethodDecorator {
  return applyDecorators(EnvelopeSpecOf(spec), UseInterceptors(EnvelopeInterceptor));
}

// What a business handler returns: the data under `dataName`, and for lists the page.
export interface Enveloped<T> {
  data: T;
  paging?: Paging;
  filters?: unknown[];
  // Further top-level properties beside the data (e.g. `store` on owner registration).
  extra?: Record<string, unknown>;
}

export interface EnvelopeFields {
  status: 'OK';
  statusCode: string;
  elapsedMs: number;
  ssoTime: number;
  source: string;
  cacheKey: string;
  userId: string | null;
  sessionId: string | null;
  requestId: string;
  dataName: string;
  method: string;
  action: string;
  appVersion: string;
  rowCount: number;
  paging?: Paging;
  filters?: unknown[];
  uiPermissions?: string[];
  [data: string]: unknown;
}

export function buildEnvelope(
  spec: EnvelopeSpec,
  result: Enveloped<unknown>,
  req: ContextRequest,
  statusCode: number,
  appVersion: string,
): EnvelopeFields {
  const list = Array.isArray(result.data);
  const envelope: EnvelopeFields = {
    status: 'OK',
    statusCode: String(statusCode),
    elapsedMs: elapsedMs(req.ctx),
    ssoTime: 0,
    source: 'db',
    // Identifies the result: same caller, store, method and URL give the same key; two callers
    // never share one (their answers differ).
    cacheKey: createHash('sha256')
      .update(`${req.ctx.store?.id ?? ''}\n${caller(req)}\n${req.method}\n${req.originalUrl}`)
      .digest('hex')
      .slice(0, 32),
    userId: req.ctx.session?.userId ?? null,
    sessionId: req.ctx.session?.sessionId ?? null,
    requestId: req.ctx.requestId,
    dataName: spec.dataName,
    method: req.method,
    action: spec.action,
    appVersion,
    rowCount: list ? (result.data as unknown[]).length : result.data == null ? 0 : 1,
  };
  if (list) {
    envelope.paging = result.paging;
    envelope.filters = result.filters ?? [];
    envelope.uiPermissions = req.ctx.uiPermissions ?? [];
  }
  return { ...envelope, [spec.dataName]: result.data, ...result.extra };
}

// Who is asking: a user, an API key (its roles may differ from its user's), a service, or nobody.
function caller(req: ContextRequest): string {
  const { session, machine } = req.ctx;
  if (session) return session.principal === 'apiKey' ? `apiKey:${session.sessionId}` : `user:${session.userId}`;
  return machine ? `machine:${machine}` : 'anonymous';
}

// The caller's permissions a list answer reports in `uiPermissions`, read for each request; the
// access module provides it.
export abstract class ListPermissions {
  abstract of(ctx: RequestContext): Promise<string[]>;
}

// A business route's result leaves in the envelope, a list's with the caller's permissions (read
// before the handler runs). Nest builds one per module that has such routes; the permissions
// come from the module that provides them (the access module), looked up once.
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  private permissions?: ListPermissions;

  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const spec = this.reflector.get(EnvelopeSpecOf, context.getHandler());
    if (!spec) return next.handle();
    const http = context.switchToHttp();
    const req = http.getRequest<ContextRequest>();
    const res = http.getResponse<Response>();
    const wrap = map((result: Enveloped<unknown>) => buildEnvelope(spec, result, req, res.statusCode, this.config.env.APP_VERSION));
    const { ctx } = req;
    if (spec.action !== 'list' || (!ctx.session && !ctx.machine)) return next.handle().pipe(wrap);
    return from(this.listPermissions().of(ctx)).pipe(
      switchMap((names) => {
        ctx.uiPermissions = names;
        return next.handle();
      }),
      wrap,
    );
  }

  private listPermissions(): ListPermissions {
    this.permissions ??= this.moduleRef.get(ListPermissions, { strict: false });
    return this.permissions;
  }
}
