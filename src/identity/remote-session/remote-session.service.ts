import { Injectable } from '@nestjs/common';
import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { Clock } from '../../platform/clock/clock.js';
import { nameUuid } from '../../platform/crypto/name-uuid.js';
import { AppError } from '../../kernel/errors.js';
import { AuditLog } from '../../kernel/audit.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { ConfigError } from '../../platform/config/env.js';
import { resolveSecret } from '../../platform/config/secrets.js';
import type { SessionData } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { UserService } from '../user/user.service.js';
import { remoteSessionEnded, remoteSessionUnavailable } from './remote-session.errors.js';
import type { RemoteSessionSettings } from './remote-session.settings.js';
import { RemoteSessionSection } from './remote-session.settings.js';

// Answers reused per (store, remote session): enough for a page's burst of calls, bounded so
// a flood of distinct sessions cannot grow the process.
const CACHE_MAX_ENTRIES = 1000;
const DEFAULT_TIMEOUT_MS = 3000;
const DEFAULT_CACHE_SECONDS = 5;

// jose's verdicts on the token itself (401); any other failure is the remote service's (503).
const TOKEN_FAULTS = new Set<string>([
  errors.JWTExpired.code,
  errors.JWTClaimValidationFailed.code,
  errors.JWTInvalid.code,
  errors.JWSInvalid.code,
  errors.JWSSignatureVerificationFailed.code,
  errors.JWKSNoMatchingKey.code,
  errors.JWKSMultipleMatchingKeys.code,
  errors.JOSEAlgNotAllowed.code,
  errors.JOSENotSupported.code,
]);

// The local account a remote session stands for.
interface RemoteUser {
  userId: string;
  roles: string[];
  email: string | null;
  mobile: string | null;
  fullname: string | null;
}

// Bearer tokens issued by a remote service (settings `remoteSession`): the token is verified
// with the service's published keys, the session id read from its claims, the session fetched
// from the service and mapped, by email, to the local user of the targeted store. No session
// row is written here: the remote service decides when the session ends.
const RECORD_EVERY_MS = 60 * 60_000;

@Injectable()
export class RemoteSessionService {
  private readonly settings: RemoteSessionSettings | null;
  private readonly headers: Record<string, string>;
  private readonly jwks?: ReturnType<typeof createRemoteJWKSet>;
  private readonly cache = new Map<string, { until: number; user: Promise<RemoteUser> }>();
  // When each remote session's login was last recorded: once an hour, not once a request.
  private readonly recorded = new Map<string, number>();

  constructor(
    private readonly users: UserService,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    config: AppConfig,
    checks: BootChecks,
  ) {
    const settings = config.section(RemoteSessionSection).remoteSession;
    this.settings = settings?.enabled ? settings : null;
    const enabled = this.settings;
    // Problems are reported with every module's (BootChecks); the boot stops after init.
    const headers = enabled ? checks.collect(() => checkSettings(enabled, config.env.NODE_ENV === 'production', config.secretFromEnv)) : undefined;
    this.headers = headers ?? {};
    if (enabled && headers) this.jwks = createRemoteJWKSet(new URL(enabled.jwksUrl), { timeoutDuration: this.timeoutMs });
  }

  private get timeoutMs(): number {
    return this.settings?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  // Whether the token was issued by the remote service (its `iss`); this service's own tokens
  // carry no issuer.
  handles(token: string): boolean {
    if (!this.settings) return false;
    try {
      return decodeJwt(token).iss === this.settings.issuer;
    } catch {
      return false;
    }
  }

  // The session a remote token stands for in the targeted store, or 401 / 503.
  async authenticate(store: Tenant, token: string): Promise<SessionData> {
    const settings = this.settings!;
    if (!settings.stores.includes(store.codename)) throw new AppError('Unauthorized', `store "${store.codename}" does not accept sessions of the remote service`);
    const claims = await this.verify(token, settings);
    const raw = valueAt(claims, settings.sessionIdPath);
    const sessionId = typeof raw === 'number' ? String(raw) : raw;
    if (typeof sessionId !== 'string' || !sessionId || sessionId.length > 512) throw new AppError('Unauthorized', `the token has no session id at "${settings.sessionIdPath}"`);
    const user = await this.cached(store.id, sessionId, () => this.lookUp(store.id, sessionId, settings));
    // A stable id for this remote session in this store, shaped like the service's own.
    const localId = nameUuid(`${store.id}\n${settings.issuer}\n${sessionId}`);
    this.recordLogin(store.id, localId, user);
    return {
      sessionId: localId,
      storeId: store.id,
      ...user,
      expiresAt: new Date(claims.exp! * 1000).toISOString(),
      principal: 'user',
    };
  }

  // The remote session's own id is a credential at the remote service: the entry names the
  // local session id derived from it.
  private recordLogin(storeId: string, sessionId: string, user: RemoteUser): void {
    const now = this.clock.now().getTime();
    const last = this.recorded.get(sessionId);
    if (last !== undefined && now - last < RECORD_EVERY_MS) return;
    if (this.recorded.size >= 10_000) {
      for (const [id, at] of this.recorded) if (now - at >= RECORD_EVERY_MS) this.recorded.delete(id);
      if (this.recorded.size >= 10_000) this.recorded.clear();
    }
    this.recorded.set(sessionId, now);
    void this.audit.record({ storeId, action: 'user.remote.login', outcome: 'success', actor: { type: 'user', id: user.userId, roleId: user.roles[0] ?? null }, target: { type: 'session', id: sessionId } }, { sessionId });
  }

  private async verify(token: string, settings: RemoteSessionSettings): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, this.jwks!, {
        issuer: settings.issuer,
        ...(settings.audience && { audience: settings.audience }),
        requiredClaims: ['exp'],
        currentDate: this.clock.now(),
      });
      return payload;
    } catch (error) {
      if (error instanceof errors.JOSEError && TOKEN_FAULTS.has(error.code)) throw new AppError('Unauthorized', 'invalid or expired token');
      throw remoteSessionUnavailable("the remote service's keys could not be read");
    }
  }

  // One request per session per cache period, shared by concurrent callers; failures are not kept.
  private cached(storeId: string, sessionId: string, load: () => Promise<RemoteUser>): Promise<RemoteUser> {
    const key = `${storeId}\n${sessionId}`;
    const now = this.clock.now().getTime();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.user;
    this.cache.delete(key);
    const user = load();
    const seconds = this.settings!.cacheSeconds ?? DEFAULT_CACHE_SECONDS;
    if (seconds > 0) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      const entry = { until: now + seconds * 1000, user };
      this.cache.set(key, entry);
      user.catch(() => this.cache.get(key) === entry && this.cache.delete(key));
    }
    return user;
  }

  private async lookUp(storeId: string, sessionId: string, settings: RemoteSessionSettings): Promise<RemoteUser> {
    const session = await this.fetchSession(sessionId, settings);
    const emailPath = settings.emailPath ?? 'email';
    const email = valueAt(session, emailPath);
    if (typeof email !== 'string' || !email.includes('@')) throw remoteSessionEnded(`the remote session has no email at "${emailPath}"`);
    const user = await this.users.findByIdentifier(storeId, 'email', email.trim().toLowerCase());
    // Unknown and deactivated accounts answer alike.
    if (!user?.isActive) throw remoteSessionEnded('the remote session has no active account in this store');
    return { userId: user.id, roles: user.roles, email: user.email, mobile: user.mobile, fullname: user.fullname };
  }

  // The session as the remote service holds it; 404 and 410 mean it has ended.
  private async fetchSession(sessionId: string, settings: RemoteSessionSettings): Promise<Record<string, unknown>> {
    const url = settings.requestUrl.replaceAll('{sessionId}', encodeURIComponent(sessionId));
    let response: Response;
    let body: unknown;
    try {
      response = await fetch(url, {
        method: settings.method,
        headers: { accept: 'application/json', ...(settings.method === 'POST' && { 'content-type': 'application/json' }), ...this.headers },
        ...(settings.method === 'POST' && { body: JSON.stringify({ sessionId }) }),
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (response.status === 404 || response.status === 410) throw remoteSessionEnded('the remote service does not know this session');
      if (!response.ok) throw remoteSessionUnavailable(`the remote service answered ${response.status}`, response.status);
      body = await response.json();
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw remoteSessionUnavailable('the remote service did not answer in time or not with JSON');
    }
    const session = settings.sessionLocation ? valueAt(body, settings.sessionLocation) : body;
    if (session === undefined || session === null || session === false) throw remoteSessionEnded('the remote service holds no such session');
    if (typeof session !== 'object' || Array.isArray(session)) throw remoteSessionUnavailable(`the remote answer has no session object at "${settings.sessionLocation ?? '(body)'}"`);
    return session as Record<string, unknown>;
  }
}

// Refusals a validator cannot express, named; the headers with their secrets read.
function checkSettings(settings: RemoteSessionSettings, production: boolean, env: (name: string) => string | undefined): Record<string, string> {
  const problems: string[] = [];
  if (settings.method === 'GET' && !settings.requestUrl.includes('{sessionId}')) problems.push('settings.remoteSession.requestUrl must contain {sessionId} when method is GET');
  if (production) {
    for (const key of ['jwksUrl', 'requestUrl'] as const) if (settings[key].startsWith('http:')) problems.push(`settings.remoteSession.${key} must be https in production`);
  }
  const headers: Record<string, string> = {};
  const given = settings.headers ?? {};
  if (typeof given !== 'object' || Array.isArray(given)) problems.push('settings.remoteSession.headers must be an object');
  else {
    for (const [name, value] of Object.entries(given)) {
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) problems.push(`settings.remoteSession.headers: "${name}" is not a header name`);
      const resolved = resolveSecret(value, `settings.remoteSession.headers.${name}`, env, problems);
      if (resolved !== undefined) headers[name] = resolved;
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return headers;
}

function valueAt(value: unknown, path: string): unknown {
  let at = value;
  for (const key of path.split('.')) {
    if (!at || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}
