import { Injectable } from '@nestjs/common';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { SocialService } from '../social/social.service.js';
import type { Tenant } from '../../kernel/tenant.js';
import { SocialSecrets, type ResolvedSso } from '../social/social-secrets.js';
import { providerErrorCode, type SocialFailure } from '../social/social.errors.js';
import { OidcClient, OidcStepError, type OidcClientSettings, type OidcStage } from '../social/oidc-client.js';
import { ssoNotConfigured, ssoProviderUnavailable } from './sso.errors.js';

// The key of the flow and of linked identities: stable when `ssoName` (what clients see) changes.
const PROVIDER = 'sso';

type Claims = Record<string, unknown>;

// What the client hears when a step of the callback fails on this side (the log says why).
const STEP_FAILURE = { discovery: 'provider_unavailable', token: 'token_exchange_failed', userinfo: 'userinfo_failed' } as const satisfies Record<OidcStage, SocialFailure>;

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

// The request being answered, as far as the flow needs it.
export interface SsoRequest {
  // Where it was sent (scheme and host): the callback's address when none is configured.
  origin: string;
  requestId?: string;
}

// Single sign-on with an OpenID Connect provider: authorization code with PKCE and a nonce,
// then the same socialCode hand-over as social login. The service issues its own JWT after.
@Injectable()
export class SsoService {
  // The client shared with the generic sign-in providers (social/oidc-client.ts).
  private readonly client?: OidcClient;

  constructor(
    private readonly social: SocialService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    secrets: SocialSecrets,
  ) {
    this.sso = secrets.sso;
    if (this.sso) this.client = new OidcClient(clientSettings(this.sso));
  }

  private readonly sso: ResolvedSso | null;

  // The provider's authorization address for this store.
  async start(store: Tenant, requestedRedirect: string | undefined, req: SsoRequest): Promise<string> {
    const sso = this.settings();
    const redirectUrl = this.social.redirectUrl(requestedRedirect);
    await this.client!.ready().catch((err: unknown) => {
      this.social.providerFailed(sso.ssoName, 'discovery', err instanceof OidcStepError ? err.cause : err, { requestId: req.requestId });
      throw ssoProviderUnavailable();
    });
    // Single sign-on is OpenID Connect: always a nonce, and an ID token expected.
    const secrets = await this.client!.secrets(true);
    const state = await this.social.beginFlow({ provider: PROVIDER, storeId: store.id, redirectUrl, ...secrets });
    return this.client!.authorizationUrl({ redirectUri: this.callbackUrl(req.origin), scopes: sso.scopes ?? DEFAULT_SCOPES, state, secrets }).catch((err: unknown) => {
      this.social.providerFailed(sso.ssoName, 'discovery', err instanceof OidcStepError ? err.cause : err, { requestId: req.requestId });
      throw ssoProviderUnavailable();
    });
  }

  // The provider's return: the client's callback address with a socialCode, or an error.
  async callback(originalUrl: string, req: SsoRequest): Promise<string> {
    const { settings: sso, clientSecret } = this.resolved();
    // openid-client sends the token request's redirect_uri from this URL: the address the
    // authorization request named, not the one this request reached (behind a proxy or under a
    // path prefix they differ, and the provider refuses the code).
    const current = new URL(this.callbackUrl(req.origin));
    current.search = new URL(originalUrl, req.origin).search;
    const params = current.searchParams;
    const flow = await this.social.takeFlow(params.get('state'), PROVIDER);
    if (!flow) return this.social.failureRedirect(sso.ssoName, 'state_mismatch');
    if (params.get('error') !== null) {
      // The provider's standard code goes on to the client, its description only to the log.
      const error = providerErrorCode(params.get('error'));
      // The person declining is no fault; any other error is the provider's or its settings'.
      if (error !== 'access_denied') this.social.providerFailed(sso.ssoName, 'authorization', { error: params.get('error'), error_description: params.get('error_description') }, { requestId: req.requestId });
      return this.social.failureRedirect(sso.ssoName, error, flow);
    }
    let profile: Claims;
    try {
      profile = await this.client!.claims(current, { state: params.get('state')!, secrets: { verifier: flow.verifier!, nonce: flow.nonce } });
    } catch (err) {
      const stage: OidcStage = err instanceof OidcStepError ? err.stage : 'token';
      this.social.providerFailed(sso.ssoName, stage, err instanceof OidcStepError ? err.cause : err, { requestId: req.requestId, secrets: [params.get('code') ?? undefined, clientSecret, flow.verifier, flow.nonce] });
      return this.social.failureRedirect(sso.ssoName, STEP_FAILURE[stage], flow);
    }
    // The round trip: from GET /sso/login (the flow's start) to this callback's completion.
    const ssoTime = Math.max(0, this.clock.now().getTime() - flow.startedAt);
    const pick = (key: string | undefined) => (key && typeof profile[key] === 'string' ? (profile[key] as string) : typeof profile[key!] === 'number' ? String(profile[key!]) : undefined);
    const sub = pick('sub');
    if (!sub) {
      this.social.providerFailed(sso.ssoName, 'userinfo', { error: 'no_subject', message: 'the ID token and the userinfo answer carry no sub claim' }, { requestId: req.requestId });
      return this.social.failureRedirect(sso.ssoName, 'subject_missing', flow);
    }
    const email = pick(sso.emailPropertyInProfile)?.toLowerCase();
    const ssoUserId = pick(sso.ssoUserIdPropertyInProfile) ?? sub;
    return this.social.finishFlow(
      { ...flow, provider: PROVIDER },
      {
        providerUserId: sub.slice(0, 255),
        ...(email && { email }),
        emailVerified: !!email && profile.email_verified === true,
        ...((pick(sso.userNamePropertyInProfile) ?? pick('name')) && { fullname: (pick(sso.userNamePropertyInProfile) ?? pick('name'))!.slice(0, 200) }),
      },
      { ssoUserId: ssoUserId.slice(0, 255), lifetimeMs: sso.tokenPeriodInMinutes * 60_000, ssoTime, providerName: sso.ssoName },
    );
  }

  private settings() {
    return this.resolved().settings;
  }

  private resolved(): ResolvedSso {
    if (!this.sso) throw ssoNotConfigured();
    return this.sso;
  }

  private callbackUrl(origin: string): string {
    return this.sso?.settings.redirectUrl ?? (this.config.env.PUBLIC_URL ? this.config.publicUrl('/auth-api/sso/callback') : `${origin}/auth-api/sso/callback`);
  }
}

// Discovery when the paths are not configured; `tokenHost` plus the configured paths otherwise.
function clientSettings({ settings, clientSecret }: ResolvedSso): OidcClientSettings {
  const host = new URL(settings.tokenHost);
  const at = (path?: string) => (path ? new URL(path, host).toString() : undefined);
  if (!settings.authPath || !settings.tokenPath) return { issuer: settings.tokenHost, clientId: settings.clientId, clientSecret };
  return {
    issuer: host.toString().replace(/\/$/, ''),
    endpoints: { authorization: at(settings.authPath)!, token: at(settings.tokenPath)!, userinfo: at(settings.userInfoPath), endSession: at(settings.logoutPath) },
    clientId: settings.clientId,
    clientSecret,
  };
}
