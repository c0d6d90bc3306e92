import type { AppConfig } from '../../platform/config/app-config.js';
import { serviceUrl } from '../../platform/config/service-url.js';
import { TokenSection } from './token.settings.js';

// Whom tokens are from and for. The `iss` of every token (settings tokenIssuer, else the
// service's public address), and the access tokens' `aud` when the settings name one. A token
// must carry both to be accepted here when they are configured (tokenIssuer or PUBLIC_URL;
// tokenAudience): another deployment signing with the same keys (one database) issues for another
// issuer or audience.
export interface TokenAudience {
  issuer: string;
  audience?: string | string[];
  issuerConfigured: boolean;
}

export function tokenAudience(config: AppConfig): TokenAudience {
  return {
    issuer: config.section(TokenSection).tokenIssuer ?? `${serviceUrl(config.env)}/auth-api`,
    audience: config.section(TokenSection).tokenAudience ?? undefined,
    issuerConfigured: !!(config.section(TokenSection).tokenIssuer || config.env.PUBLIC_URL),
  };
}
