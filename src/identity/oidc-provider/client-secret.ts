import { createHash } from 'node:crypto';
import { stringify, parse } from 'node:querystring';
import type { IncomingMessage } from 'node:http';
import type { KoaContextWithOIDC } from 'oidc-provider';

// The endpoints where oidc-provider authenticates a client by its secret (paths below the issuer).
const CLIENT_AUTH_PATHS = new Set(['/token', '/token/introspection', '/token/revocation', '/request']);
// oidc-provider reads no larger body.
const BODY_LIMIT = 56 * 1024;

// A client's secret is stored as its SHA-256 (hex) only, and the provider compares a presented
// secret with the stored value as they are. So a presented secret is replaced by its hash before
// the provider reads the request: the comparison is hash against hash. The secret comes in the
// form body (`client_secret`) or in `Authorization: Basic` (form-urlencoded, RFC 6749 §2.3.1).
export async function hashPresentedSecret(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<unknown> {
  if (ctx.method !== 'POST' || !CLIENT_AUTH_PATHS.has(ctx.path)) return next();
  const basic = hashBasicSecret(ctx.get('authorization'));
  if (basic !== undefined) ctx.req.headers.authorization = basic;
  if (ctx.is('application/x-www-form-urlencoded')) {
    const body = await readBody(ctx.req);
    if (body === undefined) {
      ctx.status = 400;
      ctx.body = { error: 'invalid_request', error_description: 'the request body is too large' };
      return;
    }
    replaceBody(ctx.req, hashFormSecret(body));
  }
  return next();
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

// `Basic base64(urlencode(id) ":" urlencode(secret))` with the secret replaced by its hash;
// undefined when the header is not one (the provider answers it as it would).
export function hashBasicSecret(header: string): string | undefined {
  const [scheme, token, extra] = header.split(' ');
  if (!token || extra !== undefined || scheme!.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  let secret: string;
  try {
    secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, '%20'));
  } catch {
    return undefined;
  }
  return `Basic ${Buffer.from(`${decoded.slice(0, colon)}:${sha256Hex(secret)}`, 'utf8').toString('base64')}`;
}

// The form body with `client_secret` replaced by its hash (a repeated one is left for the
// provider to refuse).
export function hashFormSecret(body: string): string {
  const form = parse(body);
  const secret = form.client_secret;
  if (typeof secret !== 'string') return body;
  return stringify({ ...form, client_secret: sha256Hex(secret) });
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// The provider reads the body from the request stream itself (`readable`, `iterator()`, and the
// length it declares): the request now yields the rewritten body instead.
function replaceBody(req: IncomingMessage, body: string): void {
  const bytes = Buffer.from(body, 'utf8');
  req.headers['content-length'] = String(bytes.length);
  delete req.headers['transfer-encoding'];
  Object.defineProperty(req, 'readable', { value: true, configurable: true });
  Object.defineProperty(req, 'iterator', {
    configurable: true,
    value: async function* () {
      yield bytes;
    },
  });
}
