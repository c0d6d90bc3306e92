import { createHash } from 'node:crypto';
import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type FetchImplementation, type JWTPayload } from 'jose';
import { SvcAuthError } from './errors.js';
import { resolveOptions, type ResolvedOptions, type SvcAuthOptions } from './options.js';
import type { SvcPrincipal } from './principal.js';
import { TtlCache } from './ttl-cache.js';

// What a credential is read from: an HTTP request as it is (Express, Fastify's raw request, a
// Node IncomingMessage).
export interface CredentialSource {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  // The request's URL (its `access_token` query parameter counts, as at the service).
  readonly url?: string | undefined;
  readonly originalUrl?: string | undefined;
}

// The service's introspection answer (RFC 7662).
export interface Introspection {
  active: boolean;
  sub?: string;
  sid?: string;
  storeId?: string;
  storeCodename?: string;
  roleId?: string | string[];
  exp?: number;
  iat?: number;
  token_type?: string;
  acr?: string;
  amr?: string[];
}

interface Discovery {
  issuer: string;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

const SUPER_ADMIN = 'superAdmin';

// The service's tokens and API keys checked as the service checks them: access tokens offline by
// the JWKS (issuer, audience when set, expiry, an unfinished sign-in refused), API keys and ended
// sessions by introspection, roles and permissions as the service answers them for the caller.
// Answers of the service are data, reused for `cacheSeconds`; every decision is made per request.
export class SvcAuth {
  readonly options: ResolvedOptions;
  private discovery: Promise<Discovery> | undefined;
  private readonly introspections: TtlCache<Introspection>;
  private readonly permissionAnswers: TtlCache<string[]>;
  private readonly roleAnswers: TtlCache<string[]>;
  // Store ids with their codenames, as introspection named them.
  private readonly codenames = new Map<string, string>();

  constructor(options: SvcAuthOptions) {
    this.options = resolveOptions(options);
    this.introspections = new TtlCache(this.options.cacheMs);
    this.permissionAnswers = new TtlCache(this.options.cacheMs);
    this.roleAnswers = new TtlCache(this.options.cacheMs);
  }

  // The header that names the targeted store (`svc-store-codename`).
  get storeHeader(): string {
    return `${this.options.project}-store-codename`;
  }

  // The caller of a request, or the refusal the service would give (401, or 403 TenantMismatch).
  async authenticate(req: CredentialSource): Promise<SvcPrincipal> {
    const found = this.credentialOf(req);
    if (!found) throw SvcAuthError.unauthorized('no access token');
    return found.apiKey ? this.apiKeyCaller(found.value, req) : this.tokenCaller(found.value, req);
  }

  // Any one of `roles` is enough; a super administrator's login passes them all (its API key does
  // not), as at the service.
  async requireRoles(principal: SvcPrincipal, roles: readonly string[], req?: CredentialSource): Promise<void> {
    if (roles.length === 0) return;
    const held = await this.rolesOf(principal, req);
    const pass = (principal.kind === 'user' && held.includes(SUPER_ADMIN)) || held.some((r) => roles.includes(r));
    if (!pass) throw SvcAuthError.forbidden('your role does not allow this');
  }

  // Every one of `names` must be held, as `GET /auth-api/permissions` answers for the caller.
  async requirePermissions(principal: SvcPrincipal, names: readonly string[], req?: CredentialSource): Promise<void> {
    if (names.length === 0) return;
    const held = await this.permissionsOf(principal, req);
    const missing = names.find((n) => !held.includes(n));
    if (missing !== undefined) throw new SvcAuthError(403, 'PermissionDenied', `you do not have the permission "${missing}"`);
  }

  // The caller's roles: introspection's, else `/auth-api/currentuser` asked with the caller's own
  // token (reused for cacheSeconds).
  async rolesOf(principal: SvcPrincipal, req?: CredentialSource): Promise<string[]> {
    if (principal.roles.length > 0 || this.options.apiKey) return principal.roles;
    const codename = this.targetOf(principal, req);
    const roles = await this.roleAnswers.get(`${principal.sessionId ?? hash(principal.token)}|${codename ?? ''}`, async () => {
      const body = (await this.ask('GET', '/auth-api/currentuser', principal.token, codename)) as { roleId?: unknown };
      return rolesFrom(body.roleId);
    });
    principal.roles = roles;
    return roles;
  }

  // The permissions the caller holds, as `GET /auth-api/permissions` answers with the caller's
  // own credential (reused per session for cacheSeconds).
  async permissionsOf(principal: SvcPrincipal, req?: CredentialSource): Promise<string[]> {
    const codename = principal.kind === 'apiKey' ? undefined : this.targetOf(principal, req);
    const key = `${principal.kind === 'apiKey' ? hash(principal.token) : (principal.sessionId ?? hash(principal.token))}|${codename ?? ''}`;
    const held = await this.permissionAnswers.get(key, () => this.fetchPermissions(principal.token, codename));
    principal.permissions = held;
    return held;
  }

  // Forgets every answer of the service (the keys stay).
  clearCache(): void {
    this.introspections.clear();
    this.permissionAnswers.clear();
    this.roleAnswers.clear();
  }

  // RFC 7662 at the service, with the administrator's API key (reused for cacheSeconds).
  introspect(token: string, hint: 'access_token' | 'api_key'): Promise<Introspection> {
    const apiKey = this.options.apiKey;
    if (!apiKey) return Promise.resolve({ active: false });
    return this.introspections.get(hash(token), async () => {
      const res = await this.call('POST', '/auth-api/introspect', apiKey, undefined, { token, token_type_hint: hint });
      if (res.status !== 200) {
        await res.body?.cancel();
        throw SvcAuthError.unavailable(`introspection answered ${res.status}: apiKey must be an administrator's API key`);
      }
      const answer = (await res.json()) as Introspection;
      if (answer.active && answer.storeId && answer.storeCodename) this.codenames.set(answer.storeId, answer.storeCodename);
      return answer;
    });
  }

  private async apiKeyCaller(key: string, req: CredentialSource): Promise<SvcPrincipal> {
    if (!this.options.apiKey) throw SvcAuthError.unauthorized('API keys are not accepted here (no introspection is configured)');
    const found = await this.introspect(key, 'api_key');
    if (!found.active || found.token_type !== 'api_key' || !found.storeId) throw SvcAuthError.unauthorized('invalid or expired API key');
    // A key acts in its own store only (no super administrator passes with a key).
    const target = this.options.store ?? header(req, this.storeHeader);
    if (target !== undefined && target !== found.storeCodename) throw new SvcAuthError(403, 'TenantMismatch', 'the API key belongs to another store');
    return {
      kind: 'apiKey',
      ...(found.sub !== undefined && { userId: found.sub }),
      storeId: found.storeId,
      ...(found.storeCodename !== undefined && { store: found.storeCodename }),
      roles: rolesFrom(found.roleId),
      ...(found.sid !== undefined && { sessionId: found.sid }),
      token: key,
    };
  }

  private async tokenCaller(token: string, req: CredentialSource): Promise<SvcPrincipal> {
    const claims = await this.verifyOffline(token);
    const principal: SvcPrincipal = {
      kind: 'user',
      userId: claims.userId,
      storeId: claims.storeId,
      roles: [],
      sessionId: claims.sessionId,
      ...(claims.acr !== undefined && { acr: claims.acr }),
      ...(claims.amr !== undefined && { amr: claims.amr }),
      token,
    };
    // A token of an unfinished sign-in serves only to finish it: the service's own refusal for it
    // (the factor still due), or 401 AccessTokenPending.
    if (claims.acr === 'pending') throw await this.pendingRefusal(principal, req);
    if (this.options.audience && !audienceMatches(claims.payload.aud, this.options.audience)) throw SvcAuthError.unauthorized('invalid or expired token');

    if (this.options.apiKey) {
      const found = await this.introspect(token, 'access_token');
      if (!found.active) {
        if (await this.otherStore(claims.storeId)) throw new SvcAuthError(403, 'TenantMismatch', 'the token was issued for another store');
        throw SvcAuthError.unauthorized('the session has ended');
      }
      principal.roles = rolesFrom(found.roleId);
      if (found.storeCodename !== undefined) principal.store = found.storeCodename;
      const target = this.options.store ?? header(req, this.storeHeader);
      if (target !== undefined && target !== found.storeCodename && !principal.roles.includes(SUPER_ADMIN)) {
        throw new SvcAuthError(403, 'TenantMismatch', `the token was issued for store "${found.storeCodename ?? '?'}" but the request targets store "${target}"`);
      }
      return principal;
    }

    // Offline only: a `store` is checked by the service itself, asked with the caller's token.
    if (this.options.store !== undefined) {
      await this.permissionsOf(principal, req);
      principal.store = this.options.store;
    } else {
      const known = this.codenames.get(claims.storeId);
      if (known !== undefined) principal.store = known;
    }
    return principal;
  }

  // Signature (RS256, by the JWKS), issuer and expiry, and the service's claims.
  private async verifyOffline(token: string) {
    const { issuer, jwks } = await this.discover();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer, algorithms: ['RS256'] }));
    } catch (error) {
      if (unreachable(error)) throw SvcAuthError.unavailable('the service\'s keys cannot be read');
      throw SvcAuthError.unauthorized('invalid or expired token');
    }
    const { sessionId, userId, storeId, use, acr, amr } = payload as Record<string, unknown>;
    if (typeof sessionId !== 'string' || typeof userId !== 'string' || typeof storeId !== 'string') throw SvcAuthError.unauthorized('invalid or expired token');
    // The avatar bucket's token carries the same claims, for the bucket only.
    if (use !== 'access') throw SvcAuthError.unauthorized('a bucket token is not an access token');
    return {
      payload,
      sessionId,
      userId,
      storeId,
      acr: typeof acr === 'string' ? acr : undefined,
      amr: Array.isArray(amr) ? amr.filter((m): m is string => typeof m === 'string') : undefined,
    };
  }

  // The discovery document: the issuer and the keys (kept; a failure is asked again next time).
  private discover(): Promise<Discovery> {
    this.discovery ??= (async () => {
      const res = await this.call('GET', '/auth-api/.well-known/openid-configuration');
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new Error(`discovery answered ${res.status}`);
      }
      const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
      if (typeof doc.jwks_uri !== 'string' || typeof doc.issuer !== 'string') throw new Error('the discovery document names no issuer or jwks_uri');
      const jwks = createRemoteJWKSet(new URL(doc.jwks_uri), {
        timeoutDuration: this.options.timeoutMs,
        [customFetch]: this.options.fetch as unknown as FetchImplementation,
      });
      return { issuer: this.options.issuer ?? doc.issuer, jwks };
    })().catch((error: unknown) => {
      this.discovery = undefined;
      throw SvcAuthError.unavailable(`the service's discovery document cannot be read (${error instanceof Error ? error.message : String(error)})`);
    });
    return this.discovery;
  }

  // Is this store id known to be another than the `store` option's? The administrator's key
  // names its own store.
  private async otherStore(storeId: string): Promise<boolean> {
    const target = this.options.store;
    if (target === undefined || !this.options.apiKey) return false;
    await this.introspect(this.options.apiKey, 'api_key').catch(() => undefined);
    const known = [...this.codenames].find(([, codename]) => codename === target)?.[0];
    return known !== undefined && known !== storeId;
  }

  private async pendingRefusal(principal: SvcPrincipal, req: CredentialSource): Promise<SvcAuthError> {
    const fallback = new SvcAuthError(401, 'AccessTokenPending', 'this access token serves only to finish its sign-in');
    // The administrator's key names its own store, most often the caller's.
    if (this.options.apiKey) await this.introspect(this.options.apiKey, 'api_key').catch(() => undefined);
    const codename = this.targetOf(principal, req);
    if (codename === undefined) return fallback;
    try {
      await this.permissionAnswers.get(`pending|${hash(principal.token)}|${codename}`, () => this.fetchPermissions(principal.token, codename));
      return fallback;
    } catch (error) {
      if (!(error instanceof SvcAuthError) || error.getStatus() >= 500) throw error;
      // The service's message names its own route: the errCode's is kept.
      return new SvcAuthError(error.getStatus(), error.errCode, error.body.detail);
    }
  }

  // The store a call on the caller's behalf targets: the `store` option, the store the request
  // named, else the caller's own when known (none: the service's root).
  private targetOf(principal: SvcPrincipal, req?: CredentialSource): string | undefined {
    return this.options.store ?? (req && header(req, this.storeHeader)) ?? principal.store ?? this.codenames.get(principal.storeId);
  }

  private async fetchPermissions(credential: string, codename: string | undefined): Promise<string[]> {
    const body = (await this.ask('GET', '/auth-api/permissions', credential, codename)) as { permissions?: { permission?: unknown; canDo?: unknown }[] };
    return (body.permissions ?? []).filter((p) => p.canDo === true && typeof p.permission === 'string').map((p) => p.permission as string);
  }

  // A call on the caller's behalf: its answer, or the service's refusal as it gave it.
  private async ask(method: string, path: string, credential: string, codename: string | undefined): Promise<unknown> {
    const res = await this.call(method, path, credential, codename);
    const body: unknown = await res.json().catch(() => undefined);
    if (res.status === 200) return body;
    if (res.status >= 400 && res.status < 500) throw SvcAuthError.fromService(res.status, body);
    throw SvcAuthError.unavailable(`the service answered ${res.status}`);
  }

  private async call(method: string, path: string, bearer?: string, codename?: string, json?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
    if (codename !== undefined) headers[this.storeHeader] = codename;
    if (json !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.options.fetch(`${this.options.baseUrl}${path}`, {
        method,
        headers,
        ...(json !== undefined && { body: JSON.stringify(json) }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw SvcAuthError.unavailable(`the service cannot be reached (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  // As the service reads a request: an API key (a bearer value `sk_...`) where one is sent; else
  // the `access_token` query parameter, the bearer token, the `<project>-access-token[-<store>]`
  // header, then the cookie of that name.
  private credentialOf(req: CredentialSource): { value: string; apiKey: boolean } | undefined {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(req, 'authorization') ?? '')?.[1];
    if (bearer?.startsWith('sk_')) return { value: bearer, apiKey: true };
    const url = req.originalUrl ?? req.url;
    const query = url?.includes('?') ? new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('access_token') : null;
    if (query) return { value: query, apiKey: false };
    if (bearer) return { value: bearer, apiKey: false };
    const names = this.tokenNames(req);
    for (const name of names) {
      const value = header(req, name);
      if (value) return { value, apiKey: false };
    }
    const cookie = header(req, 'cookie');
    if (cookie) {
      const jar = parseCookies(cookie);
      for (const name of names) {
        const value = jar.get(name);
        if (value) return { value, apiKey: false };
      }
    }
    return undefined;
  }

  private tokenNames(req: CredentialSource): string[] {
    const base = `${this.options.project}-access-token`;
    const store = this.options.store ?? header(req, this.storeHeader);
    return store !== undefined && store !== 'root' ? [`${base}-${store}`, base] : [base];
  }
}

function header(req: CredentialSource, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

function parseCookies(cookie: string): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of cookie.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    if (!jar.has(name)) {
      try {
        jar.set(name, decodeURIComponent(part.slice(i + 1).trim()));
      } catch {
        jar.set(name, part.slice(i + 1).trim());
      }
    }
  }
  return jar;
}

function rolesFrom(roleId: unknown): string[] {
  if (typeof roleId === 'string') return [roleId];
  return Array.isArray(roleId) ? roleId.filter((r): r is string => typeof r === 'string') : [];
}

function audienceMatches(aud: unknown, expected: readonly string[]): boolean {
  const has = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  return expected.some((a) => has.includes(a));
}

function hash(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

// The keys could not be fetched (a fault here, not the caller's).
function unreachable(error: unknown): boolean {
  if (error instanceof joseErrors.JWKSTimeout) return true;
  // A JWKS answer other than 200 is jose's generic error; a network failure no JOSE error at all.
  if (error instanceof joseErrors.JOSEError) return error.code === 'ERR_JOSE_GENERIC';
  return error instanceof Error;
}
