import type { IncomingHttpHeaders } from 'node:http';
import { parse as parseCookie } from 'cookie';
import type { ApiKeySettings } from '../apikey/api-key.settings.js';
import type { Request } from 'express';

// Where a credential may be, whatever carried it: an HTTP request is one as it is (nothing is
// copied per request); a Socket.IO handshake or an event stream hands its headers and query.
export interface PresentedCredentials {
  readonly headers: IncomingHttpHeaders;
  readonly query?: Record<string, unknown>;
  // An API key's place may be a body property (settings apiKeys.location).
  readonly body?: unknown;
  // HTTP requests only: Express parses `query` on each read, so it is read only when this URL has
  // a query string. Without it (a handshake's query, kept as it came), `query` is read as it is.
  readonly originalUrl?: string;
}

// A cookie's value from the request, or undefined.
export function cookieValue(req: Request, name: string): string | undefined {
  return req.headers.cookie ? parseCookie(req.headers.cookie)[name] || undefined : undefined;
}

// An API key from the configured place: a bearer value with the key prefix, or a named
// header, query parameter, cookie or body property.
export function extractApiKey(req: PresentedCredentials, settings: ApiKeySettings, keyPrefix: string): string | undefined {
  const { location, fieldName } = settings;
  let value: unknown;
  if (location === 'bearer') {
    const bearer = bearerValue(req);
    value = bearer?.startsWith(keyPrefix) ? bearer : undefined;
  } else if (location === 'header') value = req.headers[fieldName.toLowerCase()];
  else if (location === 'query') value = req.query?.[fieldName];
  else if (location === 'cookie') value = req.headers.cookie ? parseCookie(req.headers.cookie)[fieldName] : undefined;
  else value = (req.body as Record<string, unknown> | undefined)?.[fieldName];
  return typeof value === 'string' && value ? value : undefined;
}

// The spec's order: query `access_token`, `Authorization: Bearer`, the custom header, the
// cookie. The first place that holds a token decides; a bad token there is not retried elsewhere.
// `isApiKey` recognises a bearer value that is an API key, not a JWT.
export function extractToken(req: PresentedCredentials, names: string[], isApiKey: (value: string) => boolean = () => false): string | undefined {
  const query = queryOf(req)?.access_token;
  if (typeof query === 'string' && query) return query;
  const bearer = bearerValue(req);
  if (bearer && !isApiKey(bearer)) return bearer;
  for (const name of names) {
    const header = req.headers[name];
    if (typeof header === 'string' && header) return header;
  }
  if (req.headers.cookie) {
    const cookies = parseCookie(req.headers.cookie);
    for (const name of names) {
      if (cookies[name]) return cookies[name];
    }
  }
  return undefined;
}

// Express parses the query string on each read of `req.query`: read only when the URL has one
// (credentials the event channel hands carry their query as it is, with no URL).
function queryOf(req: PresentedCredentials): PresentedCredentials['query'] {
  return req.originalUrl === undefined || req.originalUrl.includes('?') ? req.query : undefined;
}

function bearerValue(req: PresentedCredentials): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}
