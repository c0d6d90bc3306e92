import type { AppConfig } from '../../../platform/config/app-config.js';
import type { ResolvedProvider } from '../social-secrets.js';
import type { SocialProvider } from '../social-provider.js';

// A kind of provider the settings configure: a built-in one by its name (`google`), or a generic
// one by its `type` (`oidc`). One file each in this folder.
export interface SocialProviderKind {
  // The name of the built-in provider, or the `type` of the generic kind.
  readonly key: string;
  // What the enabled entry lacks, each problem named by `path` (`settings.socialLogin.providers.<name>`).
  check(entry: ResolvedProvider, path: string, config: AppConfig): string[];
  // The provider of a checked entry, its strategy or client loaded now.
  create(entry: ResolvedProvider, config: AppConfig): Promise<SocialProvider>;
}

// This service's callback for a provider, as the provider must know it.
export const callbackPath = (name: string): string => `/auth-api/auth/${name}/callback`;
