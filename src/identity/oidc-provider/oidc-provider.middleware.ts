import { Injectable, Logger } from '@nestjs/common';
import type { NextFunction, Response } from 'express';
import { AppError, errorBody } from '../../kernel/errors.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { CODENAME_SHAPE } from '../store/codename.js';
import { StoreService } from '../store/store.service.js';
import { OidcInteractions } from './oidc-interactions.js';
import { OidcProviderService } from './oidc-provider.service.js';

// Where every store's provider is mounted: `/auth-api/oidc/{codename}`.
export const OIDC_MOUNT = '/auth-api/oidc/';
const MOUNTED = /^\/auth-api\/oidc\/([^/]+)(\/.*)?$/;

// Pages answered by these routes: forms without script, styled inline.
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

// Express middleware for `/auth-api/oidc/{codename}/...`, mounted by app.ts before the service's
// body parser: oidc-provider reads its own bodies. The store's provider answers its protocol
// routes; the sign-in pages below `/interaction/` are answered here. An unknown store, or the
// provider turned off, is 404.
@Injectable()
export class OidcProviderMiddleware {
  private readonly logger = new Logger('OidcProvider');

  constructor(
    private readonly providers: OidcProviderService,
    private readonly interactions: OidcInteractions,
    private readonly stores: StoreService,
    private readonly config: AppConfig,
  ) {}

  readonly handle = (req: ContextRequest, res: Response, next: NextFunction): void => {
    if (!req.path.startsWith(OIDC_MOUNT)) return next();
    this.serve(req, res).catch((error: unknown) => this.fail(req, res, error));
  };

  private async serve(req: ContextRequest, res: Response): Promise<void> {
    const match = MOUNTED.exec(req.path);
    if (!match) throw new AppError('RouteNotFound', 'no such route');
    if (!this.providers.settings.enabled) throw new AppError('OidcProviderDisabled', 'the OpenID Connect provider is not enabled (settings oidcProvider.enabled)');
    const codename = match[1]!;
    // The issuer names the store exactly as it is written: another spelling is another issuer.
    if (!CODENAME_SHAPE.test(codename) || codename !== codename.toLowerCase()) throw storeNotFound();
    const store = await this.stores.resolve(codename).catch((error: unknown) => {
      throw error instanceof AppError && error.errCode === 'StoreNotFound' ? storeNotFound() : error;
    });
    // A deactivated store's issuer answers nothing (no sign-in, token, discovery), as no login,
    // session or key of it works at the API.
    if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);
    const base = this.config.env.PUBLIC_URL ? this.config.publicUrl('') : listeningAddress(req);
    const provider = await this.providers.providerFor(store, base);
    const below = match[2] ?? '/';
    res.setHeader('content-security-policy', PAGE_CSP);
    if (this.interactions.handles(below)) return this.interactions.handle(provider, store, req, res, below);

    // The provider builds its addresses from the issuer, never from the Host header the caller
    // wrote: the forwarded headers it trusts (provider.proxy) are the issuer's.
    const issuer = new URL(provider.issuer);
    req.headers['x-forwarded-host'] = issuer.host;
    req.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
    // Below the mount, as the provider routes; with no original URL it takes its mount path
    // from the issuer (a codename that is also a route's name cannot confuse it).
    const originalUrl = req.originalUrl;
    const query = req.url.indexOf('?');
    req.url = below + (query >= 0 ? req.url.slice(query) : '');
    req.originalUrl = '';
    res.prependOnceListener('close', () => (req.originalUrl = originalUrl));
    await provider.callback()(req, res);
  }

  private fail(req: ContextRequest, res: Response, error: unknown): void {
    const known = error instanceof AppError ? error : undefined;
    if (!known) this.logger.error({ err: error }, 'the OpenID Connect provider failed');
    if (res.headersSent) return void res.end();
    const answer = known ?? new AppError('InternalError');
    const body = errorBody(answer, req.ctx?.requestId);
    const status = (body as { status: number }).status;
    res.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    res.status(status).json(body);
  }
}

// The store is not visible here: 404, with the tenancy's code.
function storeNotFound(): AppError {
  return new NotFoundStore();
}

class NotFoundStore extends AppError {
  constructor() {
    super('StoreNotFound', 'no store has this codename');
    (this as { status: number }).status = 404;
  }
}

// The service's own address as this connection reached it (the local end of the socket), as the
// discovery document of the service's tokens builds it.
function listeningAddress(req: ContextRequest): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return `${req.protocol}://${host}:${req.socket.localPort}`;
}
