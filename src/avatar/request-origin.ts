import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { Observable } from 'rxjs';

const origins = new AsyncLocalStorage<string>();

// Makes the address an HTTP request was sent to (scheme and host; req.protocol honours
// TRUST_PROXY) known to whatever its handler calls, so links made on the way (generated
// avatars) are absolute for that client, as upload links are.
@Injectable()
export class RequestOriginInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    const origin = `${req.protocol}://${req.get('host')}`;
    // handle() inside run(): Nest binds the handler to the async context handle() is called in.
    return new Observable((subscriber) => origins.run(origin, () => next.handle().subscribe(subscriber)));
  }
}

// The origin of the HTTP request being handled, if any.
export function requestOrigin(): string | undefined {
  return origins.getStore();
}
