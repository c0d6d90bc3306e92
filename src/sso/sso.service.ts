import { Injectable } from '@nestjs/common';
import type * as Oidc from 'openid-client';
import { Clock } from '../clock/clock.js';
import { AppConfig } from '../config/app-config.js';
import { SocialService } from '../social/social.service.js';
import type { StoreEntity } from '../store/store.entity.js';
import type { ResolvedSso } from '../config/social-secrets.js';
import { ssoNotConfigured } from './sso.errors.js';

// The key of the flow and of linked identities: stable when `ssoName` (what clients see) changes.
const PROVIDER = 'sso';

type Claims = Record<string, unknown>;

// The OpenID Connect client is loaded at the first sign-on, not at boot (most deployments
// configure none).
let library: Promise<typeof Oidc> | undefined;
const openidClient = (): Promise<typeof Oidc> => (library ??= import('openid-client'));

// Single sign-on with an OpenID Connect provider: authorization code with PKCE and a nonce,
// then the same socialCode hand-over as social login. The service issues its own JWT after.
@Injectable()
export class SsoService {
  private configuration?: Promise<Oidc.Configuration>;

  constructor(
    private readonly social: SocialService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.sso = config.sso;
  }

  private readonly sso: ResolvedSso | null;

  // The provider's authorization address for this store.
  async start(store: StoreEntity, requestedRedirect: string | undefined, origin: string): Promise<string> {
    const sso = this.settings();
    const redirectUrl = this.social.redirectUrl(requestedRedirect);
    const oidc = await openidClient();
    const configuration = await this.client();
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = await this.social.beginFlow({ provider: PROVIDER, storeId: store.id, redirectUrl, verifier, nonce });
    return oidc
      .buildAuthorizationUrl(configuration, {
        redirect_uri: this.callbackUrl(origin),
        scope: (sso.scopes ?? ['openid', 'email', 'profile']).join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      .toString();
  }

  // The provider's return: the client's callback address with a socialCode, or an error.
  async callback(originalUrl: string, origin: string): Promise<string> {
    const sso = this.settings();
    const current = new URL(originalUrl, origin);
    const flow = await this.social.takeFlow(current.searchParams.get('state'), PROVIDER);
    if (!flow) return this.social.failureRedirect(sso.ssoName, 'state_mismatch');
    if (current.searchParams.get('error')) return this.social.failureRedirect(sso.ssoName, 'access_denied', flow);
    let profile: Claims;
    try {
      const oidc = await openidClient();
      const configuration = await this.client();
      const tokens = await oidc.authorizationCodeGrant(
        configuration,
        current,
        { pkceCodeVerifier: flow.verifier, expectedState: current.searchParams.get('state')!, expectedNonce: flow.nonce },
        { redirect_uri: this.callbackUrl(origin) },
      );
      const idClaims = (tokens.claims() ?? {}) as Claims;
      const info = configuration.serverMetadata().userinfo_endpoint
        ? await oidc.fetchUserInfo(configuration, tokens.access_token, typeof idClaims.sub === 'string' ? idClaims.sub : oidc.skipSubjectCheck)
        : {};
      profile = { ...idClaims, ...info };
    } catch {
      return this.social.failureRedirect(sso.ssoName, 'provider_error', flow);
    }
    // The round trip: from GET /sso/login (the flow's start) to this callback's completion.
    const ssoTime = Math.max(0, this.clock.now().getTime() - flow.startedAt);
    const pick = (key: string | undefined) => (key && typeof profile[key] === 'string' ? (profile[key] as string) : typeof profile[key!] === 'number' ? String(profile[key!]) : undefined);
    const sub = pick('sub');
    if (!sub) return this.social.failureRedirect(sso.ssoName, 'provider_error', flow);
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
    if (!this.sso) throw ssoNotConfigured();
    return this.sso.settings;
  }

  private callbackUrl(origin: string): string {
    return this.sso?.settings.redirectUrl ?? (this.config.env.PUBLIC_URL ? this.config.publicUrl('/auth-api/sso/callback') : `${origin}/auth-api/sso/callback`);
  }

  // Discovery when the paths are not configured; the configured paths otherwise. Kept once
  // it worked; a failed discovery is tried again on the next login.
  private client(): Promise<Oidc.Configuration> {
    const { settings, clientSecret } = this.sso!;
    this.configuration ??= (async () => {
      const oidc = await openidClient();
      const host = new URL(settings.tokenHost);
      const insecure = host.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
      if (!settings.authPath || !settings.tokenPath) return oidc.discovery(host, settings.clientId, clientSecret, undefined, insecure);
      const at = (path?: string) => (path ? new URL(path, host).toString() : undefined);
      const configuration = new oidc.Configuration(
        {
          issuer: host.toString().replace(/\/$/, ''),
          authorization_endpoint: at(settings.authPath),
          token_endpoint: at(settings.tokenPath),
          userinfo_endpoint: at(settings.userInfoPath),
          end_session_endpoint: at(settings.logoutPath),
        },
        settings.clientId,
        clientSecret,
      );
      if (insecure) oidc.allowInsecureRequests(configuration);
      return configuration;
    })();
    this.configuration.catch(() => (this.configuration = undefined));
    return this.configuration;
  }
}
