import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { AppConfig } from '../../platform/config/app-config.js';
import type { Tx } from '../../platform/database/transactions.js';
import { AuthService, type LoginResult } from '../auth/auth.service.js';
import { Clock } from '../../platform/clock/clock.js';
import type { SessionMeta } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { AuditLog, type AuditContext } from '../../kernel/audit.js';
import { UserService } from '../user/user.service.js';
import { SocialRepository } from './social.repository.js';
import { normalizeProfile, type SocialProfile } from './social-profile.js';
import { SocialSecrets, type ResolvedSocialLogin } from './social-secrets.js';
import { providerErrorCode, providerNotFound, redirectNotAllowed, socialCodeInvalid, socialProviderUnavailable, type SocialFailure } from './social.errors.js';
import { providerFailure } from './provider-failure.js';
import { SocialProviderError, type SocialProvider } from './social-provider.js';
import { SocialProviderRegistry } from './social-provider-registry.js';
import { callbackPath } from './providers/kind.js';

export const SOCIAL_CODE_TTL_MS = 180_000;
// Time a person has at the provider's pages.
const STATE_TTL_MS = 10 * 60_000;

// A redirect to a provider in progress, kept under the hash of its `state`.
export interface SocialFlow {
  provider: string;
  storeId: string;
  redirectUrl: string;
  verifier?: string;
  nonce?: string;
  startedAt: number;
}

// What a `socialCode` stands for.
interface CodePayload {
  provider: string;
  profile: SocialProfile;
  // Single sign-on: the user id the session exposes, the session's lifetime, the round trip.
  ssoUserId?: string;
  lifetimeMs?: number;
  ssoTime?: number;
  // What clients see as `provider` when it differs from the link key (single sign-on's `ssoName`).
  providerName?: string;
}

export type SocialResult =
  | { type: 'login'; login: LoginResult; ssoTime?: number }
  | { type: 'RegisterNeededForSocialLogin'; socialCode: string; accountInfo: Record<string, unknown> };

// What a registration takes from a socialCode.
export interface ClaimedSocialProfile {
  provider: string;
  profile: SocialProfile;
  // Links the new user to the provider account, with its audit entry, in the user's transaction.
  // `context`: the registering request's (address, agent), for the audit entry.
  link(storeId: string, userId: string, tx: Tx, context?: AuditContext): Promise<void>;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

// The browser's request to a sign-in route, as far as the flow needs it.
export interface SocialRequest {
  // Scheme and host it was sent to: the callback's address when PUBLIC_URL is not set.
  origin: string;
  requestId?: string;
  // The return's parameters: its query and, for a form post, its fields.
  params: Readonly<Record<string, unknown>>;
  raw: IncomingMessage;
}

@Injectable()
export class SocialService {
  constructor(
    private readonly repo: SocialRepository,
    private readonly users: UserService,
    private readonly auth: AuthService,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
    private readonly audit: AuditLog,
    private readonly providers: SocialProviderRegistry,
    private readonly config: AppConfig,
    secrets: SocialSecrets,
  ) {
    this.resolved = secrets.socialLogin;
    logger.setContext(SocialService.name);
  }

  private readonly resolved: ResolvedSocialLogin;

  // The client's callback address: the one the sign-in names when it is configured, exactly
  // (never a prefix or a pattern: the socialCode travels in it); the default when it names none.
  redirectUrl(requested?: string): string {
    const { redirectUrl, redirectUrls } = this.resolved;
    if (!redirectUrl) throw redirectNotAllowed();
    if (requested === undefined) return redirectUrl;
    if (!redirectUrls.includes(requested)) throw redirectNotAllowed();
    return requested;
  }

  // GET /auth-api/auth/:provider: the provider's authorization address for a new flow in `store`.
  async start(store: Tenant, name: string, requestedRedirect: string | undefined, req: SocialRequest): Promise<string> {
    const provider = this.provider(name);
    const redirectUrl = this.redirectUrl(requestedRedirect);
    try {
      return await provider.authorizationUrl({
        callbackUrl: this.callbackUrl(name, req),
        request: req.raw,
        beginFlow: (keep = {}) =>
          this.beginFlow({ provider: name, storeId: store.id, redirectUrl, ...(keep.verifier && { verifier: keep.verifier }), ...(keep.nonce && { nonce: keep.nonce }) }),
      });
    } catch (err) {
      // The provider's fault (its discovery failed...): 502, the cause in the log. Anything
      // else (the database keeping the flow) is answered as it is.
      if (!(err instanceof SocialProviderError)) throw err;
      this.providerFailed(name, err.stage, err.cause, { requestId: req.requestId, secrets: provider.secrets });
      throw socialProviderUnavailable(name);
    }
  }

  // The provider's return: the client's callback address with a socialCode, or an `error`.
  async callback(name: string, req: SocialRequest): Promise<string> {
    const provider = this.provider(name);
    const field = (key: string): unknown => req.params[key];
    const code = field('code');
    const flow = await this.takeFlow(field('state'), name);
    if (!flow) return this.failureRedirect(name, 'state_mismatch');
    // A return without a code: the person declined, or the provider refused. Its standard code
    // goes on to the client, its description only to the log.
    if (typeof code !== 'string' || !code) {
      const error = providerErrorCode(field('error'));
      if (error !== 'access_denied') {
        const words = { error: field('error'), error_description: field('error_description') };
        this.providerFailed(name, 'authorization', typeof words.error === 'string' ? words : { error: 'no_code', message: 'the provider returned without a code or an error' }, { requestId: req.requestId });
      }
      return this.failureRedirect(name, error, flow);
    }
    let profile: SocialProfile | undefined;
    try {
      profile = normalizeProfile(await provider.profile({ callbackUrl: this.callbackUrl(name, req), params: req.params, flow: { state: field('state') as string, verifier: flow.verifier, nonce: flow.nonce }, request: req.raw }));
    } catch (err) {
      const failed = err instanceof SocialProviderError;
      // What a failed exchange could quote: the return's code, the flow's values, the provider's secrets.
      this.providerFailed(name, failed ? err.stage : 'callback', failed ? err.cause : err, { requestId: req.requestId, secrets: [code, flow.verifier, flow.nonce, ...(provider.secrets ?? [])] });
      return this.failureRedirect(name, failed ? err.failure : 'provider_error', flow);
    }
    if (!profile) return this.failureRedirect(name, field('error') ? providerErrorCode(field('error')) : 'login_failed', flow);
    return this.finishFlow(flow, profile);
  }

  private provider(name: string): SocialProvider {
    const provider = this.providers.get(name);
    if (!provider) throw providerNotFound(name);
    return provider;
  }

  // This service's callback for the provider, as the authorization request names it.
  private callbackUrl(name: string, req: SocialRequest): string {
    return this.config.absoluteUrl(callbackPath(name), req.origin);
  }

  // A new `state` bound to the targeted store; the PKCE verifier and nonce stay server-side.
  async beginFlow(flow: Omit<SocialFlow, 'startedAt'>): Promise<string> {
    const state = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.repo.insertCode(flow.storeId, { codeHash: sha256(state), kind: 'state', payload: { ...flow, startedAt: now.getTime() }, expiresAt: new Date(now.getTime() + STATE_TTL_MS) }, now);
    return state;
  }

  // The flow of a `state`, once: a replayed or forged state finds nothing.
  async takeFlow(state: unknown, provider: string): Promise<SocialFlow | undefined> {
    if (typeof state !== 'string' || !state || state.length > 200) return undefined;
    const row = await this.repo.take(null, sha256(state), 'state');
    if (!row || row.expiresAt <= this.clock.now()) return undefined;
    const flow = row.payload as unknown as SocialFlow;
    return flow.provider === provider ? flow : undefined;
  }

  // The provider proved who this is: a socialCode for the client, in the redirect address.
  async finishFlow(flow: SocialFlow, profile: SocialProfile, extra: Omit<CodePayload, 'provider' | 'profile'> = {}): Promise<string> {
    const socialCode = await this.issueCode(flow.storeId, { provider: flow.provider, profile, ...extra });
    return withQuery(flow.redirectUrl, { provider: extra.providerName ?? flow.provider, socialCode });
  }

  failureRedirect(provider: string, error: SocialFailure, flow?: SocialFlow): string {
    return withQuery(flow?.redirectUrl ?? this.redirectUrl(), { provider, error });
  }

  // The browser hears one word (the provider's standard code, or ours): the operator reads why
  // here (social login and single sign-on). `secrets` are the exchange's values (code, client secret, verifier), masked
  // should a message quote them.
  providerFailed(provider: string, stage: string, err: unknown, at: { requestId?: string; secrets?: readonly (string | undefined)[] } = {}): void {
    this.logger.warn({ provider, stage, requestId: at.requestId, ...providerFailure(err, at.secrets) }, 'sign-in failed at the provider');
  }

  // POST /auth/social-login-result: the session of the linked user, or what registration needs.
  async result(store: Tenant, socialCode: string, meta: SessionMeta): Promise<SocialResult> {
    const payload = await this.redeem(store.id, socialCode);
    const identity = await this.repo.findIdentity(store.id, payload.provider, payload.profile.providerUserId);
    const user = identity && (await this.users.findById(store.id, identity.userId));
    if (user) {
      const login = await this.auth.loginVerified(store, user, { ...meta, ssoUserId: payload.ssoUserId, lifetimeMs: payload.lifetimeMs }, { amr: ['fed'] });
      return { type: 'login', login, ...(payload.ssoTime !== undefined && { ssoTime: payload.ssoTime }) };
    }
    // Never linked by email: the person registers (an existing email is refused there) and the
    // account is linked then.
    const next = await this.issueCode(store.id, payload);
    const p = payload.profile;
    return {
      type: 'RegisterNeededForSocialLogin',
      socialCode: next,
      accountInfo: { provider: payload.providerName ?? payload.provider, ...(p.email && { email: p.email, emailVerified: p.emailVerified }), ...(p.fullname && { fullname: p.fullname }), ...(p.avatar && { avatar: p.avatar }) },
    };
  }

  // Registration with a socialCode: the provider's profile, and how to link the new user.
  async claim(storeId: string, socialCode: string, tx?: Tx): Promise<ClaimedSocialProfile> {
    const payload = await this.redeem(storeId, socialCode, tx);
    return {
      provider: payload.provider,
      profile: payload.profile,
      link: async (userStoreId, userId, tx, context = {}) => {
        await this.repo.insertIdentity(userStoreId, { id: randomUUID(), userId, provider: payload.provider, providerUserId: payload.profile.providerUserId, createdAt: this.clock.now() }, tx);
        await this.audit.record({ storeId: userStoreId, action: 'user.social.linked', outcome: 'success', actor: { type: 'anonymous', id: null }, target: { type: 'user', id: userId }, details: { provider: payload.providerName ?? payload.provider } }, context, tx);
      },
    };
  }

  private async issueCode(storeId: string, payload: CodePayload): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.repo.insertCode(storeId, { codeHash: sha256(code), kind: 'code', payload: payload as unknown as Record<string, unknown>, expiresAt: new Date(now.getTime() + SOCIAL_CODE_TTL_MS) }, now);
    return code;
  }

  // Single use, in the store it was issued for, within 180 s.
  private async redeem(storeId: string, socialCode: string, tx?: Tx): Promise<CodePayload> {
    const row = await this.repo.take(storeId, sha256(socialCode), 'code', tx);
    if (!row || row.expiresAt <= this.clock.now()) throw socialCodeInvalid();
    return row.payload as unknown as CodePayload;
  }
}

function withQuery(address: string, params: Record<string, string>): string {
  const url = new URL(address);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}
