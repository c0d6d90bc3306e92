// How a backend reaches the service and what it accepts.
export interface SvcAuthOptions {
  // The service's address (`http://127.0.0.1:3000`): discovery, introspection and permissions are
  // asked there. One of `baseUrl` and `issuer` is required.
  baseUrl?: string | undefined;
  // The tokens' `iss` when it is not the one the discovery document names (the service's
  // `tokenIssuer` or `PUBLIC_URL` + `/auth-api`). Without `baseUrl`, the service is reached at the
  // issuer's address without its `/auth-api`.
  issuer?: string | undefined;
  // The `aud` an access token must carry (the service's `tokenAudience`); unchecked when absent.
  audience?: string | string[] | undefined;
  // A store's codename: a credential of any other store is refused (403 TenantMismatch), except a
  // super administrator's login, as the service does.
  store?: string | undefined;
  // An administrator's API key (`sk_...`): introspection is asked with it, so API keys are
  // accepted and an ended session is refused within `cacheSeconds`. Without it, access tokens are
  // verified offline only and API keys are refused.
  apiKey?: string | undefined;
  // How long the answers of introspection and of `/auth-api/permissions` are reused (default 30).
  cacheSeconds?: number | undefined;
  // The service's PROJECT_CODENAME (default `svc`): the names of its headers and API keys.
  project?: string | undefined;
  // How the service is asked (default the global fetch): a proxy, a test double.
  fetch?: typeof fetch | undefined;
  // The most a request to the service may take, in milliseconds (default 5000).
  timeoutMs?: number | undefined;
}

export interface ResolvedOptions {
  baseUrl: string;
  issuer: string | undefined;
  audience: string[] | undefined;
  store: string | undefined;
  apiKey: string | undefined;
  cacheMs: number;
  project: string;
  fetch: typeof fetch;
  timeoutMs: number;
}

export const DEFAULT_CACHE_SECONDS = 30;

export function resolveOptions(options: SvcAuthOptions): ResolvedOptions {
  const issuer = options.issuer?.replace(/\/$/, '');
  const base = options.baseUrl ?? issuer?.replace(/\/auth-api$/, '');
  if (!base) throw new Error('SvcAuthModule: set baseUrl (the service\'s address) or issuer');
  const cacheSeconds = options.cacheSeconds ?? DEFAULT_CACHE_SECONDS;
  if (!(cacheSeconds >= 0)) throw new Error('SvcAuthModule: cacheSeconds must be 0 or more');
  if (options.apiKey !== undefined && !options.apiKey.startsWith('sk_')) throw new Error('SvcAuthModule: apiKey must be an API key of the service (sk_...)');
  return {
    baseUrl: base.replace(/\/$/, ''),
    issuer,
    audience: options.audience === undefined ? undefined : Array.isArray(options.audience) ? options.audience : [options.audience],
    store: options.store,
    apiKey: options.apiKey,
    cacheMs: cacheSeconds * 1000,
    project: options.project ?? 'svc',
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    timeoutMs: options.timeoutMs ?? 5000,
  };
}
