import { Injectable } from '@nestjs/common';
import { PENDING_ACR } from '../../kernel/assurance.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthPolicy } from '../../kernel/policy.js';
import type { SessionData } from '../../kernel/principal.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { RateLimits } from '../../kernel/rate-limit/rate-limit.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { ApiKeyService } from '../apikey/api-key.service.js';
import { MachineAuthService } from '../m2m/machine-auth.service.js';
import { RemoteSessionService } from '../remote-session/remote-session.service.js';
import { SessionService } from '../session/session.service.js';
import { StoreService } from '../store/store.service.js';
import { resolveTarget } from '../tenancy/tenancy.middleware.js';
import { accessTokenName, TokenCookies } from '../token/token-cookies.js';
import { extractApiKey, extractToken, type PresentedCredentials } from '../token/token-extractor.js';
import { TokenVerifierService } from '../token/token-verifier.service.js';
import { VerificationGate } from '../verification/verification.gate.js';
import { ApiKeySection } from '../apikey/api-key.settings.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';
import { PublicRoutesSection } from '../../kernel/policy.settings.js';

// The route a call asks for, as a pending second factor's refusal names it
// (`errMsg_getUsersByIdRequiresEmail2FA`).
export interface CalledRoute {
  method: string;
  path: string;
}

// What a caller presented where the store is named rather than already resolved: a Socket.IO
// handshake, an event stream (kept for the life of the stream, so the caller is asked again
// after a logout or a deactivation elsewhere).
export interface CallerCredentials extends PresentedCredentials {
  // The store the caller named (header, `_store`, a handshake's `tenantCodename`); none: root.
  readonly codename?: string;
  readonly route: CalledRoute;
}

// What the caller is asked for. A route's policy is one as it is; the event channel states its own.
export type CallerRules = Pick<AuthPolicy, 'principals' | 'bucketToken' | 'publicWhen' | 'noLoginShape' | 'during2FA' | 'mfaEnrollment' | 'saasAdminTargetsAnyStore'> & {
  // No credential at all is an anonymous caller (a bad one is refused all the same).
  anonymous?: boolean;
  // The targeted store itself must be active, whoever calls (anonymous, or a super administrator
  // from root): a stream carries that store's events. An HTTP route checks the caller's own
  // store only, so a super administrator still reaches a deactivated one.
  targetActive?: boolean;
  // A token of another store is refused without the HTTP advice (which header to send): the
  // event channel's clients name their store in the handshake or the query.
  bareTenantMismatch?: boolean;
};

// Who is calling, for which store.
export interface Caller {
  // The targeted store, or an API key's own when none was named.
  readonly store: Tenant;
  // A login's or an API key's session; none for a machine or an anonymous caller.
  readonly session: SessionData | undefined;
  // The calling service of a machine token.
  readonly machine: string | undefined;
  // A login's access token (echoed by /currentuser).
  readonly token: string | undefined;
  // The token was issued while its sign-in was unfinished (`acr: pending`).
  readonly pending: boolean;
  // The route is open to anyone at the moment (`publicWhen`): nothing more is asked of the caller.
  readonly open: boolean;
}

// Who is calling, for which store, by one set of rules whatever carries the call (an HTTP route,
// a Socket.IO handshake, an SSE stream): an API key is the credential where one is sent; a token
// is verified and its session must be live; a credential counts only in its own store (a super
// administrator's in any), of an active store; a login with a second factor pending reaches only
// what is open during it. The answer is the caller or the AppError the route gives.
@Injectable()
export class CallerResolver {
  constructor(
    private readonly tokens: TokenVerifierService,
    private readonly sessions: SessionService,
    private readonly config: AppConfig,
    private readonly remote: RemoteSessionService,
    private readonly cookies: TokenCookies,
    private readonly limits: RateLimits,
    private readonly apiKeys: ApiKeyService,
    private readonly machines: MachineAuthService,
    private readonly stores: StoreService,
    private readonly verification: VerificationGate,
  ) {}

  private readonly apiKeyPrefix = `sk_${this.config.env.PROJECT_CODENAME}_`;

  // The names an access token may have in a store's requests, kept per codename (asked on every
  // authenticated request); emptied should a deployment's stores outgrow it.
  private readonly namesByStore = new Map<string, string[]>();

  // An HTTP request: the request is its credentials as it is, its store the one the tenancy
  // middleware resolved, the route's policy its rules. Only a request carries a machine token
  // (it signs the request's method, path and body).
  resolveRequest(req: ContextRequest, policy: AuthPolicy): Promise<Caller> {
    return this.identify(req, req.ctx.store!, req.ctx.storeTargeted === true, policy, undefined, req);
  }

  // A caller that names its store: as on HTTP, a single-tenant deployment refuses a named store
  // (`root` aside), and a name that is no store is 400 StoreNotFound.
  async resolve(credentials: CallerCredentials, rules: CallerRules): Promise<Caller> {
    const store = await resolveTarget(this.stores, this.config.section(TenancySection).tenancy, credentials.codename);
    return this.identify(credentials, store, credentials.codename !== undefined, rules, credentials.route, undefined);
  }

  // The login if the credentials carry a usable token, otherwise nothing, whatever its store
  // (logout ends the session of the token sent).
  tryLogin(credentials: PresentedCredentials, store: Tenant): Promise<Caller | undefined> {
    return this.optionalLogin(credentials, store, false);
  }

  // `route`: the route asked for; none for an HTTP request, whose matched route is read only
  // when a refusal names it.
  private async identify(credentials: PresentedCredentials, store: Tenant, targeted: boolean, rules: CallerRules, route: CalledRoute | undefined, request: ContextRequest | undefined): Promise<Caller> {
    // An API key, where one is sent, is the credential: no token or cookie is looked at.
    const apiKey = this.config.section(ApiKeySection).apiKeys.enabled ? extractApiKey(credentials, this.config.section(ApiKeySection).apiKeys, this.apiKeyPrefix) : undefined;
    if (apiKey !== undefined) {
      if (!rules.principals.apiKey) throw new AppError('PrincipalNotAccepted', 'this route does not accept API keys');
      const session = await this.apiKeys.authenticate(apiKey);
      // An external caller's tenant is the key's; naming another store is refused.
      let tenant: Tenant | null = store;
      if (session.storeId !== store.id) {
        if (targeted) throw new AppError('TenantMismatch', 'the API key belongs to another store');
        tenant = await this.stores.findById(session.storeId);
        if (!tenant) throw new AppError('Unauthorized', 'invalid or expired API key');
      }
      if (!tenant.isActive) throw inactive(tenant, rules);
      // An API key has no second factor.
      return caller(tenant, session, undefined, undefined, false, false);
    }

    if (request && rules.principals.machine && (this.machines.hasToken(request) || !rules.principals.user)) {
      return caller(store, undefined, await this.machines.authenticate(request), undefined, false, false);
    }

    let login: Caller | undefined;
    const open = rules.publicWhen !== undefined && this.config.section(PublicRoutesSection)[rules.publicWhen];
    if (open) {
      // Open to anonymous callers, but a token still counts only in its own store, of an active
      // store, and only once its second factors are done.
      login = await this.optionalLogin(credentials, store, true);
      if (!login) return caller(store, undefined, undefined, undefined, false, true);
    } else {
      if (!rules.principals.user) throw new AppError('PrincipalNotAccepted', 'this route does not accept user sessions');
      const token = this.tokenFrom(credentials, store);
      if (token === undefined) {
        if (!rules.anonymous) throw new AppError('Unauthorized', 'no access token');
        if (rules.targetActive && !store.isActive) throw targetInactive(store);
        return caller(store, undefined, undefined, undefined, false, false);
      }
      login = await this.login(token, store, rules, false);
    }

    const session = login.session!;
    // A login in its own store (nearly every call) is decided without waiting.
    if (session.storeId !== store.id) await this.foreignLogin(session, store, targeted, rules);
    else if (!store.isActive) throw inactive(store, rules);
    // A login's pending second factor (or a token issued while it was) closes the route.
    this.verification.checkRequest(session, route ?? routeOf(request!), rules, login.pending);
    return login;
  }

  // The token first found in the credentials, for this store's names (a bad one is not the
  // same as none).
  private tokenFrom(credentials: PresentedCredentials, store: Tenant): string | undefined {
    return extractToken(credentials, this.tokenNames(store), (v) => v.startsWith(this.apiKeyPrefix));
  }

  // The store's name first; the root name too, for a super administrator acting in a store.
  private tokenNames(store: Tenant): string[] {
    let names = this.namesByStore.get(store.codename);
    if (!names) {
      names = [this.cookies.accessName(store)];
      if (store.codename !== ROOT_CODENAME) names.push(accessTokenName(this.config.env.PROJECT_CODENAME, ROOT_CODENAME, ROOT_CODENAME));
      if (this.namesByStore.size >= 10_000) this.namesByStore.clear();
      this.namesByStore.set(store.codename, names);
    }
    return names;
  }

  // A token that is none, bad or of an ended session counts as no login.
  private async optionalLogin(credentials: PresentedCredentials, store: Tenant, open: boolean): Promise<Caller | undefined> {
    const token = this.tokenFrom(credentials, store);
    if (token === undefined) return undefined;
    try {
      return await this.login(token, store, ANY_LOGIN, open);
    } catch (error) {
      if (error instanceof AppError && error.status === 401) return undefined;
      throw error;
    }
  }

  // The token verified and its live session.
  private async login(token: string, store: Tenant, rules: LoginRules, open: boolean): Promise<Caller> {
    // A token the remote service issued stands for its session there (settings remoteSession).
    if (this.remote.handles(token)) return caller(store, await this.remote.authenticate(store, token), undefined, token, false, open);
    const claims = this.tokens.verifiedBefore(token)?.claims ?? (await this.tokens.verify(token));
    if (claims.use === 'bucket' && !rules.bucketToken) throw new AppError('Unauthorized', 'a bucket token is not an access token');
    const session = await this.sessions.get(claims.storeId, claims.sessionId);
    if (!session || session.userId !== claims.userId) {
      // Only on this refusal path, never for a live session: on the second-factor routes, a
      // sign-in that too many wrong authenticator codes ended answers its further tries 429, on
      // any replica (the counter is the mfa feature's limit, in Redis when configured).
      if (rules.during2FA && !rules.noLoginShape && (await this.limits.exhausted('totpPerSession', claims.sessionId))) {
        throw new AppError('TotpAttemptsExceeded', 'too many wrong codes ended this sign-in: log in again');
      }
      throw new AppError('Unauthorized', 'the session has ended');
    }
    return caller(store, session, undefined, token, claims.acr === PENDING_ACR, open);
  }

  // A login of another store than the targeted one counts only for a super administrator (and a
  // SaaS administrator of root where the route says so); the refusal says how to fix the call:
  // which header, with the token's own store. The login's own store must be active: a
  // deactivated store's sessions stop at once (the store cache, which every replica empties of
  // a store as soon as the database announces its change).
  private async foreignLogin(session: SessionData, store: Tenant, targeted: boolean, rules: CallerRules): Promise<void> {
    const own = await this.stores.findById(session.storeId);
    const superAdmin = session.roles.includes(SAAS_ROLES.superAdmin);
    const saasAdmin = rules.saasAdminTargetsAnyStore && own?.codename === ROOT_CODENAME && session.roles.includes(SAAS_ROLES.saasAdmin);
    if (!superAdmin && !saasAdmin) {
      if (!own || rules.bareTenantMismatch) throw new AppError('TenantMismatch', 'the token was issued for another store');
      const header = `${this.config.env.PROJECT_CODENAME}-store-codename`;
      const target = targeted ? `store "${store.codename}"` : `no store (root is assumed)`;
      throw new AppError('TenantMismatch', `the token was issued for store "${own.codename}" but the request targets ${target}: send the header ${header}: ${own.codename}`);
    }
    if (rules.targetActive && !store.isActive) throw targetInactive(store);
    if (!own?.isActive) throw storeInactive();
  }
}

// What a route may ask of a token itself: a bucket token in its place, a second-factor route's
// answer to a sign-in that too many wrong codes ended.
type LoginRules = Pick<CallerRules, 'bucketToken' | 'during2FA' | 'noLoginShape'>;
const ANY_LOGIN: LoginRules = {};

// The same shape for every answer.
function caller(store: Tenant, session: SessionData | undefined, machine: string | undefined, token: string | undefined, pending: boolean, open: boolean): Caller {
  return { store, session, machine, token, pending, open };
}

function storeInactive(): AppError {
  return new AppError('StoreInactive', 'the store of this login is deactivated');
}

function targetInactive(store: Tenant): AppError {
  return new AppError('StoreInactive', `store "${store.codename}" is not active`);
}

// The caller's store, which is also the targeted one: named as the target where the rules ask
// the target to be active.
function inactive(store: Tenant, rules: CallerRules): AppError {
  return rules.targetActive ? targetInactive(store) : storeInactive();
}

// The matched route of an HTTP request.
function routeOf(req: ContextRequest): CalledRoute {
  return { method: req.method, path: String((req.route as { path?: string } | undefined)?.path ?? req.path) };
}
