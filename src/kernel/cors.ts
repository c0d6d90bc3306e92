import type { NextFunction, Request, Response } from 'express';
import type { CorsPolicy } from './cors-policy.js';

const METHODS = 'GET,HEAD,POST,PUT,PATCH,DELETE';

// CORS for the HTTP routes. Before tenancy and body parsing, so a preflight never meets a
// 400 for its store or body. An origin that is not allowed gets no CORS header at all: the
// browser then keeps the answer from the page.
export function corsMiddleware(policy: CorsPolicy): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const origin = req.headers.origin;
    // The answer's first Vary (nothing before this middleware sets one): set, not merged.
    res.setHeader('vary', 'Origin');
    const allowed = policy.isAllowed(origin);
    if (allowed) {
      res.setHeader('Access-Control-Allow-Origin', policy.anyOrigin && !policy.credentials ? '*' : origin!);
      if (policy.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    const preflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (preflight) {
      if (allowed) {
        res.setHeader('Access-Control-Allow-Methods', METHODS);
        // The origin is trusted: whatever request headers it asks for (store, token, API key...).
        const asked = req.headers['access-control-request-headers'];
        if (asked) res.setHeader('Access-Control-Allow-Headers', asked);
        res.vary('Access-Control-Request-Headers');
        res.setHeader('Access-Control-Max-Age', String(policy.maxAgeSeconds));
      }
      res.statusCode = 204;
      res.setHeader('Content-Length', '0');
      res.end();
      return;
    }
    if (allowed) exposeHeaders(res, policy);
    next();
  };
}

// The token header's name depends on the store (`<project>-access-token-<codename>`), known
// only once the route has set it: the list is completed just before the headers leave.
function exposeHeaders(res: Response, policy: CorsPolicy): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: unknown[]) {
    const tokenHeaders = res.getHeaderNames().filter((name) => policy.tokenHeader.test(name));
    res.setHeader('Access-Control-Expose-Headers', [...new Set([...policy.exposedHeaders, ...tokenHeaders])].join(', '));
    return (writeHead as (...a: unknown[]) => Response).apply(this, args);
  } as Response['writeHead'];
}
