import { describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  ConflictException,
  ForbiddenException,
  HttpException,
  HttpStatus,
  MethodNotAllowedException,
  NotFoundException,
  PayloadTooLargeException,
  UnauthorizedException,
  UnsupportedMediaTypeException,
  type ArgumentsHost,
} from '@nestjs/common';
import type { PinoLogger } from 'nestjs-pino';
import { ErrorFilter, toAppError } from './error.filter.js';
import { AppError } from './errors.js';

function setup(opts: { requestId?: string; headersSent?: boolean } = {}) {
  const logged: unknown[][] = [];
  const contexts: string[] = [];
  const logger = { setContext: (name: string) => contexts.push(name), error: (...args: unknown[]) => logged.push(args) };
  const sent: { headers?: Record<string, string>; status?: number; body?: unknown } = {};
  const res = {
    headersSent: opts.headersSent ?? false,
    set(headers: Record<string, string>) {
      sent.headers = headers;
      return res;
    },
    status(n: number) {
      sent.status = n;
      return res;
    },
    json(body: unknown) {
      sent.body = body;
      return res;
    },
  };
  const req = { ctx: opts.requestId === undefined ? undefined : { requestId: opts.requestId } };
  const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
  const filter = new ErrorFilter(logger as unknown as PinoLogger);
  return { filter, host, sent, logged, contexts };
}

describe('ErrorFilter', () => {
  it('sends an AppError with the catalogue message code in message and the sentence in detail', () => {
    const { filter, host, sent, logged } = setup({ requestId: 'req-1' });
    filter.catch(new AppError('DuplicateIdentifier', 'custom msg'), host);
    expect(sent.status).toBe(409);
    expect(sent.body).toEqual({ result: 'ERR', status: 409, message: 'errMsg_DuplicateIdentifier', errCode: 'DuplicateIdentifier', detail: 'custom msg', requestId: 'req-1' });
    expect(logged).toEqual([]);
  });

  it('has no detail field when the AppError has no detail', () => {
    const { filter, host, sent } = setup({ requestId: 'req-1' });
    filter.catch(new AppError('StoreInactive'), host);
    expect(sent.body).toEqual({ result: 'ERR', status: 403, message: 'errMsg_StoreInactive', errCode: 'StoreInactive', requestId: 'req-1' });
  });

  it('keeps the /currentuser shape: no code, no detail', () => {
    const { filter, host, sent } = setup({ requestId: 'req-1' });
    filter.catch(new AppError('NoLoginFound', 'the session has ended'), host);
    expect(sent.body).toEqual({ status: 'ERR', message: 'No login found' });
  });

  it("sets the AppError's headers", () => {
    const { filter, host, sent } = setup({ requestId: 'req-2' });
    filter.catch(new AppError('TooManyRequests', undefined, { 'Retry-After': '60' }), host);
    expect(sent.status).toBe(429);
    expect(sent.headers).toEqual({ 'Retry-After': '60' });
    expect(sent.body).toMatchObject({ errCode: 'TooManyRequests', status: 429 });
  });

  it.each<[string, number, string, HttpException]>([
    ['NotFoundException', 404, 'RouteNotFound', new NotFoundException('Cannot GET /nope')],
    ['PayloadTooLargeException', 413, 'PayloadTooLarge', new PayloadTooLargeException()],
    ['MethodNotAllowedException', 405, 'MethodNotAllowed', new MethodNotAllowedException()],
    ['UnsupportedMediaTypeException', 415, 'UnsupportedMediaType', new UnsupportedMediaTypeException()],
  ])('maps Nest %s to %i %s', (_case, status, errCode, exception) => {
    const { filter, host, sent, logged } = setup({ requestId: 'req-3' });
    filter.catch(exception, host);
    expect(sent.status).toBe(status);
    expect(sent.body).toEqual({ result: 'ERR', status, message: `errMsg_${errCode}`, errCode, requestId: 'req-3' });
    expect(logged).toEqual([]);
  });

  it('hides an unexpected error behind a 500 and logs it with the request id', () => {
    const { filter, host, sent, logged, contexts } = setup({ requestId: 'req-4' });
    const error = new Error('db password=secret');
    filter.catch(error, host);
    expect(sent.status).toBe(500);
    expect(sent.body).toEqual({ result: 'ERR', status: 500, message: 'errMsg_InternalError', errCode: 'InternalError', requestId: 'req-4' });
    expect(JSON.stringify(sent.body)).not.toMatch(/secret|password/);
    expect(logged).toHaveLength(1);
    expect(logged[0][0]).toEqual({ err: error, requestId: 'req-4' });
    expect(contexts).toEqual(['ErrorFilter']);
  });

  it('still answers when the request has no context yet', () => {
    const { filter, host, sent } = setup();
    filter.catch(new NotFoundException(), host);
    expect(sent.status).toBe(404);
    expect(sent.body).toMatchObject({ errCode: 'RouteNotFound', requestId: undefined });
  });

  it('writes nothing when the headers are already sent, but still logs', () => {
    const { filter, host, sent, logged } = setup({ requestId: 'req-5', headersSent: true });
    filter.catch(new Error('late'), host);
    expect(sent).toEqual({});
    expect(logged).toHaveLength(1);
  });
});

describe('toAppError', () => {
  it('returns an AppError unchanged', () => {
    const error = new AppError('WeakPassword', 'too short');
    expect(toAppError(error)).toBe(error);
  });

  it.each<[string, string, number, HttpException]>([
    ['BadRequestException', 'ValidationFailed', 400, new BadRequestException()],
    ['UnauthorizedException', 'Unauthorized', 401, new UnauthorizedException()],
    ['ForbiddenException', 'Forbidden', 403, new ForbiddenException()],
    ['NotFoundException', 'RouteNotFound', 404, new NotFoundException()],
    ['PayloadTooLargeException', 'PayloadTooLarge', 413, new PayloadTooLargeException()],
    ['HttpException 503', 'ServiceUnavailable', 503, new HttpException('busy', HttpStatus.SERVICE_UNAVAILABLE)],
    ['ConflictException', 'Conflict', 409, new ConflictException()],
    // a client error with no code of its own stays a client error, never a 500
    ['HttpException 418', 'ValidationFailed', 400, new HttpException('teapot', HttpStatus.I_AM_A_TEAPOT)],
  ])('maps %s to %s', (_case, errCode, status, exception) => {
    expect(toAppError(exception)).toMatchObject({ errCode, status });
  });

  it.each([
    ['a plain Error', new Error('boom')],
    ['a string', 'boom'],
    ['undefined', undefined],
    ['a server-side HttpException without a catalogue code', new HttpException('bad gateway', HttpStatus.BAD_GATEWAY)],
  ])('gives undefined for %s', (_case, exception) => {
    expect(toAppError(exception)).toBeUndefined();
  });
});
