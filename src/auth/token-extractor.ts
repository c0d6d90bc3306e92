import { parse as parseCookie } from 'cookie';
import type { Request } from 'express';

export type TokenSource = 'query' | 'bearer' | 'header' | 'cookie';

// `<project>-access-token` at root, `<project>-access-token-<codename>` for a store.
export function accessTokenName(project: string, codename: string, rootCodename: string): string {
  return codename === rootCodename ? `${project}-access-token` : `${project}-access-token-${codename}`;
}

// The spec's order: query `access_token`, `Authorization: Bearer`, the custom header, the
// cookie. The first place that holds a token decides; a bad token there is not retried elsewhere.
export function extractToken(req: Request, names: string[]): { token: string; source: TokenSource } | undefined {
  const query = req.query?.access_token;
  if (typeof query === 'string' && query) return { token: query, source: 'query' };

  const auth = req.headers.authorization;
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return { token: match[1], source: 'bearer' };
  }
  for (const name of names) {
    const header = req.headers[name];
    if (typeof header === 'string' && header) return { token: header, source: 'header' };
  }
  if (req.headers.cookie) {
    const cookies = parseCookie(req.headers.cookie);
    for (const name of names) {
      const value = cookies[name];
      if (value) return { token: value, source: 'cookie' };
    }
  }
  return undefined;
}
