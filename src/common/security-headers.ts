import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

// Images pages on other origins may show (<img src>): avatars, generated and uploaded.
const EMBEDDABLE = /^\/auth-api\/(avatars\/|bucket\/userAvatars\/download\/)/;

// Security headers on every answer (helmet's defaults), with three choices of ours:
// - HSTS is not sent here: it belongs to answers over HTTPS only, decided where TLS is known.
// - no `upgrade-insecure-requests`: /docs must load over plain http on a developer's machine.
// - avatars are embeddable cross-origin (Cross-Origin-Resource-Policy), everything else is not.
export function securityHeaders(): (req: Request, res: Response, next: NextFunction) => void {
  const options = (policy: 'same-origin' | 'cross-origin') =>
    helmet({
      strictTransportSecurity: false,
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
      crossOriginResourcePolicy: { policy },
    });
  const api = options('same-origin');
  const images = options('cross-origin');
  return (req, res, next) => (EMBEDDABLE.test(req.path) ? images : api)(req, res, next);
}
