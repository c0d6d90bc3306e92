import { Injectable } from '@nestjs/common';
import type { CookieOptions, Response } from 'express';
import { AppConfig } from '../../platform/config/app-config.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import type { LoginTokens } from './token.types.js';
import { TokenSection } from './token.settings.js';

// The route refresh tokens are sent to; their cookie goes there only.
export const REFRESH_ROUTE = '/auth-api/refresh';

// `<project>-access-token` at root, `<project>-access-token-<codename>` for a store.
export function accessTokenName(project: string, codename: string, rootCodename: string): string {
  return codename === rootCodename ? `${project}-access-token` : `${project}-access-token-${codename}`;
}

// `<project>-refresh-token[-<codename>]`, as the access token's.
export function refreshTokenName(project: string, codename: string, rootCodename: string): string {
  return codename === rootCodename ? `${project}-refresh-token` : `${project}-refresh-token-${codename}`;
}

// A login's tokens as cookies (and the access token as a header of the same name, for clients
// that cannot keep cookies): httpOnly, SameSite=Lax, Secure in production or as COOKIE_SECURE says.
@Injectable()
export class TokenCookies {
  private readonly options: CookieOptions;
  private readonly refreshPath: string;

  constructor(private readonly config: AppConfig) {
    const { COOKIE_SECURE, COOKIE_DOMAIN, NODE_ENV, PUBLIC_URL } = config.env;
    this.options = { httpOnly: true, sameSite: 'lax', secure: COOKIE_SECURE ?? NODE_ENV === 'production', domain: COOKIE_DOMAIN, path: '/' };
    // Behind a path prefix (PUBLIC_URL https://example.com/identity) the browser sees the prefix.
    const prefix = PUBLIC_URL ? new URL(PUBLIC_URL).pathname.replace(/\/$/, '') : '';
    this.refreshPath = prefix + REFRESH_ROUTE;
  }

  // Header and cookie name of the access token for the store.
  accessName(store: Tenant): string {
    return accessTokenName(this.config.env.PROJECT_CODENAME, store.codename, ROOT_CODENAME);
  }

  refreshName(store: Tenant): string {
    return refreshTokenName(this.config.env.PROJECT_CODENAME, store.codename, ROOT_CODENAME);
  }

  send(res: Response, store: Tenant, tokens: LoginTokens): void {
    const name = this.accessName(store);
    res.cookie(name, tokens.accessToken, { ...this.options, expires: tokens.accessTokenExpiresAt });
    res.setHeader(name, tokens.accessToken);
    if (tokens.refreshToken) {
      res.cookie(this.refreshName(store), tokens.refreshToken, { ...this.options, path: this.refreshPath, expires: tokens.sessionExpiresAt });
    }
  }

  clear(res: Response, store: Tenant): void {
    res.clearCookie(this.accessName(store), this.options);
    if (this.config.section(TokenSection).accessTokenMinutes) res.clearCookie(this.refreshName(store), { ...this.options, path: this.refreshPath });
  }
}
