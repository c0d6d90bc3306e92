import { Catch, HttpException, HttpStatus, NotFoundException, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { AppError, errorBody, type ErrCode } from './errors.js';
import { ConfigError } from '../platform/config/env.js';
import { isDependencyOutage, OUTAGE_RETRY_AFTER_S } from '../platform/outage/outage.js';
import type { ContextRequest } from './request-context.js';
import { RouteMethods } from './route-methods.js';

// Nest's own HTTP exceptions (unknown route, wrong method...) mapped onto the catalogue.
const HTTP_STATUS_CODES: Partial<Record<number, ErrCode>> = {
  [HttpStatus.BAD_REQUEST]: 'ValidationFailed',
  [HttpStatus.UNAUTHORIZED]: 'Unauthorized',
  [HttpStatus.FORBIDDEN]: 'Forbidden',
  [HttpStatus.NOT_FOUND]: 'RouteNotFound',
  [HttpStatus.METHOD_NOT_ALLOWED]: 'MethodNotAllowed',
  [HttpStatus.NOT_ACCEPTABLE]: 'NotAcceptable',
  [HttpStatus.CONFLICT]: 'Conflict',
  [HttpStatus.UNPROCESSABLE_ENTITY]: 'UnprocessableEntity',
  [HttpStatus.PAYLOAD_TOO_LARGE]: 'PayloadTooLarge',
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: 'UnsupportedMediaType',
  [HttpStatus.TOO_MANY_REQUESTS]: 'TooManyRequests',
  [HttpStatus.SERVICE_UNAVAILABLE]: 'ServiceUnavailable',
};

export function toAppError(exception: unknown): AppError | undefined {
  if (exception instanceof AppError) return exception;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    // Any other client error stays a client error: never a 500 for bad input.
    const code = HTTP_STATUS_CODES[status] ?? (status >= 400 && status < 500 ? 'ValidationFailed' : undefined);
    return code ? new AppError(code) : undefined;
  }
  return undefined;
}

// The one exception filter: every error leaves as `{ result: 'ERR', status, message, errCode }`.
// PostgreSQL or Redis out of reach is a 503 with Retry-After; anything else unexpected becomes
// a 500 that carries only the request id; details go to the log (see errorForLog).
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(
    private readonly logger: PinoLogger,
    @Optional() private readonly routes?: RouteMethods,
  ) {
    logger.setContext(ErrorFilter.name);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<ContextRequest>();
    const res = http.getResponse<Response>();
    const requestId = req.ctx?.requestId;

    let error = this.wrongMethod(exception, req) ?? toAppError(exception);
    // A secret or setting the service needs at run time is missing or wrong (a stored secret
    // KEY_ENCRYPTION_SECRET does not open): the operator's to fix, and the caller's to retry.
    if (!error && exception instanceof ConfigError) {
      this.logger.error({ problems: exception.problems, requestId }, 'the configuration cannot serve this request');
      error = new AppError('ServiceUnavailable', 'the service cannot answer this now (its configuration); retry later');
    }
    if (!error && isDependencyOutage(exception)) {
      this.logger.warn({ err: exception, requestId }, 'dependency unavailable');
      error = new AppError('ServiceUnavailable', 'a service this one depends on is unavailable; retry shortly');
    }
    if (!error) {
      this.logger.error({ err: exception, requestId }, 'unhandled error');
      error = new AppError('InternalError');
    }
    if (res.headersSent) return;
    // Every 503 (outage, readiness, overload) tells the client when to come back.
    const headers = error.status === 503 ? { 'Retry-After': String(OUTAGE_RETRY_AFTER_S), ...error.headers } : error.headers;
    res.set(headers).status(error.status).json(errorBody(error, requestId));
  }

  // Nest's answer to a request no route matched (`req.route` unset) is a 404; when the path is a
  // route's and only the method is not, it is a 405 with the methods it takes.
  private wrongMethod(exception: unknown, req: ContextRequest): AppError | undefined {
    if (!(exception instanceof NotFoundException) || req.route || !this.routes) return undefined;
    const allowed = this.routes.allowed(req.path);
    if (!allowed.length) return undefined;
    return new AppError('MethodNotAllowed', `this route takes ${allowed.join(', ')}, not ${req.method}`, { Allow: allowed.join(', ') });
  }
}
