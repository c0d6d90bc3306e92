import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { AppError, errorBody } from './errors.js';
import type { ContextRequest, RequestContext } from './request-context.js';

export const JSON_BODY_LIMIT = '100kb';
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// Keys that would reach an object's prototype if ever copied onto one.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

// HSTS for a year, sent only over HTTPS (where browsers heed it).
const HSTS = 'max-age=31536000; includeSubDomains';

// What runs once a request is over (its answer sent, or the client gone before it): the request
// log line, metrics, API completion events. One listener per request calls them all; a hook
// does not throw (it runs in a socket's event).
export type RequestEndHook = (req: ContextRequest, res: Response) => void;

// The requests being answered, so that a shutdown lets them finish (and record what they do)
// before the modules stop. Each holds a numbered slot while it is answered, and a freed slot is
// taken again: a Set of the responses cost about a twelfth of an authenticated request's CPU
// under load (hashing each response object into a table that every request changes).
export class OpenRequests {
  private readonly slots: (Response | undefined)[] = [];
  private readonly free: number[] = [];

  // The slot the request holds until delete().
  add(res: Response): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = res;
    return slot;
  }

  delete(slot: number): void {
    this.slots[slot] = undefined;
    this.free.push(slot);
  }

  // At a shutdown: the answers not yet begun tell their client to close the connection
  // (`Connection: close`), which Node.js then closes once they are sent.
  closeConnectionsAfterAnswers(): void {
    for (const res of this.slots) if (res && !res.headersSent) res.setHeader('Connection', 'close');
  }

  // Once no request is being answered, or after `timeoutMs`. Event streams do not count: a
  // shutdown has ended them before it waits (EventHub.shutdown), and a reader too slow to take
  // its last frame holds nothing back.
  async settled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const busy = () => this.slots.some((res) => res !== undefined && !String(res.getHeader('content-type') ?? '').startsWith('text/event-stream'));
    while (busy() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// A request's context as the first middleware makes it. Its origin and the client's address are
// read from the request when first asked: Express works them out from the trusted proxy headers,
// and most routes never ask.
class HttpRequestContext implements RequestContext {
  readonly startedAt = process.hrtime.bigint();
  readonly userAgent: string | null;
  private originRead?: string;
  private ipRead?: string | null;
  store?: RequestContext['store'];
  storeTargeted?: boolean;
  machine?: string;
  session?: RequestContext['session'];
  accessToken?: string;
  uiPermissions?: string[];

  constructor(
    private readonly req: Request,
    readonly requestId: string,
  ) {
    this.userAgent = req.headers['user-agent'] ?? null;
  }

  get origin(): string {
    return (this.originRead ??= `${this.req.protocol}://${this.req.headers.host}`);
  }

  get ip(): string | null {
    if (this.ipRead === undefined) this.ipRead = this.req.ip ?? null;
    return this.ipRead;
  }
}

// First middleware: the request id (kept from `x-request-id` when well-formed), the clock and the
// origin, on the request (`req.ctx`, the RequestContext the routes receive). Answers carry
// tokens, sessions and keys, so no cache keeps any answer unless its route says so (images).
// `req.secure` follows TRUST_PROXY: behind a proxy, X-Forwarded-Proto decides.
export function requestContext(onEnd: readonly RequestEndHook[], open?: OpenRequests): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const slot = open?.add(res);
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && INCOMING_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    (req as ContextRequest).ctx = new HttpRequestContext(req, requestId);
    res.setHeader('x-request-id', requestId);
    res.setHeader('cache-control', 'no-store');
    if (req.secure) res.setHeader('Strict-Transport-Security', HSTS);
    // `on`, not `once` (an answer closes once; `once` wraps each listener in two more objects).
    res.on('close', () => {
      if (slot !== undefined) open!.delete(slot);
      for (const hook of onEnd) hook(req as ContextRequest, res);
    });
    next();
  };
}

function send(req: Request, res: Response, error: AppError): void {
  res.status(error.status).json(errorBody(error, (req as ContextRequest).ctx?.requestId));
}

// Deeper bodies would overflow the stack of the recursive transformer and validator (a 500).
const MAX_BODY_DEPTH = 32;

// PostgreSQL text cannot hold NUL: refused here rather than failing in the database (a 500).
const NUL = '\u0000';
// A lone UTF-16 surrogate (JSON allows `"\ud800"`) is not Unicode text: validators throw on it
// (URIError in the email check) and the database would silently store U+FFFD instead.
const LONE_SURROGATE = /\p{Cs}/u;

function textProblem(value: string, what: string): AppError | undefined {
  if (value.includes(NUL)) return new AppError('ValidationFailed', `${what} contains a NUL character`);
  if (LONE_SURROGATE.test(value)) return new AppError('ValidationFailed', `${what} is not valid Unicode text (lone surrogate)`);
  return undefined;
}

function bodyProblem(value: unknown, depth = 0, path = 'body'): AppError | undefined {
  if (typeof value === 'string') return textProblem(value, path);
  if (!value || typeof value !== 'object') return undefined;
  if (depth > MAX_BODY_DEPTH) return new AppError('ValidationFailed', `body is nested deeper than ${MAX_BODY_DEPTH} levels`);
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return new AppError('ForbiddenField', `property ${key} is not accepted`);
    const keyProblem = textProblem(key, 'a property name');
    if (keyProblem) return keyProblem;
    const nested = bodyProblem((value as Record<string, unknown>)[key], depth + 1, path === 'body' ? key : `${path}.${key}`);
    if (nested) return nested;
  }
  return undefined;
}

// JSON bodies: at most 100 kB, an object at the top, at most 32 levels deep, no prototype keys,
// no NUL or lone surrogate in strings; other body types are refused except multipart (uploads), and
// flat form-encoded bodies on `formRoutes` (endpoints that third-party client libraries post forms to).
// Parser failures are answered here in the error shape (they happen before Nest's filter can see
// them).
// Form posts are taken on `formRoutes` (endpoints that third-party client libraries post forms to)
// and on `formPaths` (a provider's `form_post` callback).
export function jsonBody(opts: { formRoutes?: readonly string[]; formPaths?: { test(path: string): boolean } } = {}): (req: Request, res: Response, next: NextFunction) => void {
  // The exact bytes are kept for machine tokens and webhooks, which are bound to them.
  const keepRaw = (req: unknown, _res: unknown, buf: Buffer) => ((req as ContextRequest).rawBody = buf);
  const parseJson = express.json({ limit: JSON_BODY_LIMIT, strict: true, verify: keepRaw });
  const parseForm = express.urlencoded({ limit: JSON_BODY_LIMIT, extended: false, parameterLimit: 50, verify: keepRaw });
  const forms = new Set(opts.formRoutes ?? []);
  return (req, res, next) => {
    // No body at all (most GETs): nothing to parse or check, as body-parser itself decides. The
    // request's stream is let run to its end now: left unread, Node drains it only once the answer
    // is written, and listens for its end then, which cost more than reading nothing now.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      req.resume();
      return next();
    }
    const form = (forms.has(req.path) || !!opts.formPaths?.test(req.path)) && req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
    (form ? parseForm : parseJson)(req, res, (err?: { type?: string }) => {
      if (err) {
        if (err.type === 'entity.too.large') return send(req, res, new AppError('PayloadTooLarge', `body exceeds ${JSON_BODY_LIMIT}`));
        if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') return send(req, res, new AppError('UnsupportedMediaType'));
        return send(req, res, new AppError('MalformedJson', 'body is not valid JSON'));
      }
      // A body in any other type would reach validation as "missing fields": say what is wrong.
      const hasContent = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if (hasContent && !form && !req.is(['application/json', 'multipart/form-data'])) {
        return send(req, res, new AppError('UnsupportedMediaType', 'send the body as application/json'));
      }
      if ((form || req.is('application/json')) && req.body !== undefined) {
        if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
          return send(req, res, new AppError('ValidationFailed', 'body must be a JSON object'));
        }
        const problem = bodyProblem(req.body);
        if (problem) return send(req, res, problem);
      }
      next();
    });
  };
}

type Middleware = (req: Request, res: Response, next: NextFunction) => unknown;

// Middleware that every request passes, run one after another as one layer of Express's router:
// each layer costs a match of the path and a few closures per request (as separate layers, these
// made up half of the router's share of an authenticated request). An error, thrown or passed to
// `next`, goes to Express as it would from a layer of its own.
export function inSequence(...handlers: Middleware[]): Middleware {
  return (req, res, next) => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error) return next(error);
      const handler = handlers[index++];
      if (!handler) return next();
      try {
        const result = handler(req, res, step);
        if (result instanceof Promise) result.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
