import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

// Images pages on other origins may show (<img src>): avatars, generated and uploaded.
const EMBEDDABLE = /^\/auth-api\/(avatars\/|bucket\/userAvatars\/download\/)/;

type Header = [name: string, value: string | string[]];

// Answers that are JSON (or an event stream), never a document a browser renders: the API, health,
// metrics, the inbox, event streams. Images under the API are documents (an SVG can hold script).
const JSON_ONLY = /^\/(auth-api\/|health\/|metrics$|notifications|events\/)/;

// What a JSON answer needs of the document headers (OWASP's REST guidance): no sniffing it into a
// document, no framing, no resource loads should a browser render it anyway, no referrer, not
// embeddable by other origins. Helmet's full set (a CSP for pages, COOP, DNS prefetch...) is for
// documents: on every API answer it was two fifths of the headers' bytes.
// Names in lower case, as Node keys them (a name it must lower-case costs a copy per answer).
const API_HEADERS: Header[] = [
  ['content-security-policy', "default-src 'none'; frame-ancestors 'none'"],
  ['cross-origin-resource-policy', 'same-origin'],
  ['referrer-policy', 'no-referrer'],
  ['x-content-type-options', 'nosniff'],
  ['x-frame-options', 'DENY'],
];

// Security headers on every answer: the short set above on JSON answers, helmet's defaults on
// documents (/docs, images, anything else), with three choices of ours:
// - HSTS is not sent here: it belongs to answers over HTTPS only, decided where TLS is known.
// - no `upgrade-insecure-requests`: /docs must load over plain http on a developer's machine.
// - avatars are embeddable cross-origin (Cross-Origin-Resource-Policy), everything else is not.
// With these options helmet's headers do not depend on the request: they are taken from it once
// and set from that list on each answer (helmet's chain of a dozen middleware was 2 % of a
// request).
export function securityHeaders(): (req: Request, res: Response, next: NextFunction) => void {
  const headersOf = (policy: 'same-origin' | 'cross-origin') =>
    helmetHeaders(
      helmet({
        strictTransportSecurity: false,
        contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
        crossOriginResourcePolicy: { policy },
      }),
    );
  const documents = headersOf('same-origin');
  const images = headersOf('cross-origin');
  return (req, res, next) => {
    const path = req.path;
    for (const [name, value] of EMBEDDABLE.test(path) ? images : JSON_ONLY.test(path) ? API_HEADERS : documents) res.setHeader(name, value);
    next();
  };
}

// The headers a helmet middleware sets on an answer (it removes none we send: X-Powered-By is
// disabled on the application).
function helmetHeaders(middleware: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void): Header[] {
  const headers: Header[] = [];
  const res = {
    setHeader: (name: string, value: string | string[]) => void headers.push([name, value]),
    removeHeader: () => undefined,
  };
  let done = false;
  middleware({ headers: {} } as IncomingMessage, res as unknown as ServerResponse, (err) => {
    if (err) throw err;
    done = true;
  });
  if (!done) throw new Error('helmet did not answer synchronously: its headers cannot be taken once');
  return headers;
}
