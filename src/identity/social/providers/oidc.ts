import type { OidcClaimsSetting, OidcProviderSetting } from '../social.settings.js';
import { OidcClient, OidcStepError, type OidcStage } from '../oidc-client.js';
import { email, str, yes, type Json, type PartialProfile } from '../social-profile.js';
import { SocialProviderError, type SocialAuthorizationRequest, type SocialCallback, type SocialProfile, type SocialProvider, type SocialProviderFailure } from '../social-provider.js';
import type { SocialProviderKind } from './kind.js';

// A generic OAuth 2.0 / OpenID Connect provider configured by settings alone (`"type": "oidc"`),
// through the client single sign-on uses: "Sign in with X" without code, the profile read from
// the claims the settings name.

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

// The OpenID Connect claim of each field, unless the settings name another.
const DEFAULT_CLAIMS: Required<OidcClaimsSetting> = {
  subject: 'sub',
  email: 'email',
  emailVerified: 'email_verified',
  name: 'name',
  givenName: 'given_name',
  familyName: 'family_name',
  picture: 'picture',
};

// What the client hears when a step fails (the log says why).
const STEP_FAILURE: Record<OidcStage, SocialProviderFailure> = { discovery: 'provider_unavailable', token: 'token_exchange_failed', userinfo: 'userinfo_failed' };

export const oidc: SocialProviderKind = {
  key: 'oidc',
  check(entry, path, config) {
    const s = entry.setting as OidcProviderSetting;
    const problems: string[] = [];
    if (!entry.clientSecret) problems.push(`${path}.clientSecret is required`);
    if (!!s.authorizationUrl !== !!s.tokenUrl) problems.push(`${path}: authorizationUrl and tokenUrl go together (without both, the issuer's discovery document gives them)`);
    if (config.env.NODE_ENV === 'production') {
      for (const key of ['issuer', 'authorizationUrl', 'tokenUrl', 'profileUrl', 'jwksUrl'] as const) {
        if (s[key]?.startsWith('http:')) problems.push(`${path}.${key} must be https in production`);
      }
    }
    return problems;
  },
  async create(entry) {
    const s = entry.setting as OidcProviderSetting;
    const client = new OidcClient({
      issuer: s.issuer,
      ...(s.authorizationUrl && s.tokenUrl && { endpoints: { authorization: s.authorizationUrl, token: s.tokenUrl, userinfo: s.profileUrl, jwks: s.jwksUrl } }),
      clientId: s.clientId,
      clientSecret: entry.clientSecret!,
    });
    return new GenericOidcProvider(entry.name, client, s.scopes ?? DEFAULT_SCOPES, { ...DEFAULT_CLAIMS, ...definedOf(s.claims) }, [entry.clientSecret]);
  },
};

class GenericOidcProvider implements SocialProvider {
  constructor(
    readonly name: string,
    private readonly client: OidcClient,
    private readonly scopes: readonly string[],
    private readonly claims: Required<OidcClaimsSetting>,
    readonly secrets: readonly (string | undefined)[],
  ) {}

  async authorizationUrl(start: SocialAuthorizationRequest): Promise<string> {
    // Discovered before a flow is begun: an unusable provider answers at once.
    await this.client.ready().catch(stepFailed);
    const secrets = await this.client.secrets(OidcClient.isOpenId(this.scopes));
    const state = await start.beginFlow(secrets);
    return this.client.authorizationUrl({ redirectUri: start.callbackUrl, scopes: this.scopes, state, secrets }).catch(stepFailed);
  }

  async profile(callback: SocialCallback): Promise<SocialProfile | undefined> {
    const { state, verifier, nonce } = callback.flow;
    // The token request names the callback address the authorization request named, whatever
    // address a proxy forwarded the return to.
    const current = new URL(callback.callbackUrl);
    for (const [key, value] of Object.entries(callback.params)) if (typeof value === 'string') current.searchParams.set(key, value);
    const claims = await this.client.claims(current, { state, secrets: { verifier: verifier!, ...(nonce && { nonce }) } }).catch(stepFailed);
    const profile = this.read(claims);
    if (!profile.providerUserId) throw new SocialProviderError('userinfo', 'subject_missing', { error: 'no_subject', message: `neither the ID token nor the userinfo answer carries the subject claim ${this.claims.subject}` });
    return profile as SocialProfile;
  }

  private read(claims: Json): PartialProfile {
    const at = (name: string): unknown => name.split('.').reduce<unknown>((v, key) => (v && typeof v === 'object' ? (v as Json)[key] : undefined), claims);
    const address = email(at(this.claims.email));
    return {
      providerUserId: str(at(this.claims.subject)),
      email: address,
      emailVerified: !!address && yes(at(this.claims.emailVerified)),
      fullname: str(at(this.claims.name)) ?? ([str(at(this.claims.givenName)), str(at(this.claims.familyName))].filter(Boolean).join(' ') || undefined),
      avatar: str(at(this.claims.picture)),
    };
  }
}

function stepFailed(err: unknown): never {
  if (err instanceof OidcStepError) throw new SocialProviderError(err.stage, STEP_FAILURE[err.stage], err.cause);
  throw err;
}

function definedOf(claims: OidcClaimsSetting | undefined): Partial<OidcClaimsSetting> {
  return Object.fromEntries(Object.entries(claims ?? {}).filter(([, v]) => typeof v === 'string'));
}
