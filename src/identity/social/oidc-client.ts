import type * as Oidc from 'openid-client';

// The one OpenID Connect / OAuth 2.0 client of the service (openid-client), used by single
// sign-on and by the generic sign-in providers: discovery or configured endpoints, the
// authorization address with PKCE (and a nonce for OpenID Connect), the code exchange with its
// ID token checks, and the userinfo answer.

// The library is loaded at the first sign-in, not at boot (most deployments configure none).
let library: Promise<typeof Oidc> | undefined;
const openidClient = (): Promise<typeof Oidc> => (library ??= import('openid-client'));

export interface OidcClientSettings {
  // The issuer identifier: where discovery looks, and what ID tokens must name.
  issuer: string;
  // The endpoints instead of discovery (both the authorization and the token endpoint).
  endpoints?: { authorization: string; token: string; userinfo?: string; jwks?: string; endSession?: string };
  clientId: string;
  clientSecret: string;
}

// The step that failed: the provider's discovery document, the code exchange (and its ID token
// checks), the userinfo answer. The error the step threw is the cause.
export type OidcStage = 'discovery' | 'token' | 'userinfo';

export class OidcStepError extends Error {
  constructor(
    readonly stage: OidcStage,
    override readonly cause: unknown,
  ) {
    super(`OpenID Connect ${stage} failed`);
    this.name = 'OidcStepError';
  }
}

// What a sign-in keeps between the authorization request and the return (server side).
export interface OidcFlowSecrets {
  verifier: string;
  // OpenID Connect only (an `openid` scope).
  nonce?: string;
}

export class OidcClient {
  private configuration?: Promise<Oidc.Configuration>;

  constructor(private readonly settings: OidcClientSettings) {}

  // OpenID Connect (an ID token, a nonce) when the scopes ask for `openid`; plain OAuth 2.0 otherwise.
  static isOpenId(scopes: readonly string[]): boolean {
    return scopes.includes('openid');
  }

  async secrets(openId: boolean): Promise<OidcFlowSecrets> {
    const oidc = await openidClient();
    return { verifier: oidc.randomPKCECodeVerifier(), ...(openId && { nonce: oidc.randomNonce() }) };
  }

  // The provider's authorization address. Throws OidcStepError('discovery').
  async authorizationUrl(request: { redirectUri: string; scopes: readonly string[]; state: string; secrets: OidcFlowSecrets }): Promise<string> {
    const configuration = await this.client();
    const oidc = await openidClient();
    return oidc
      .buildAuthorizationUrl(configuration, {
        redirect_uri: request.redirectUri,
        scope: request.scopes.join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(request.secrets.verifier),
        code_challenge_method: 'S256',
        state: request.state,
        ...(request.secrets.nonce && { nonce: request.secrets.nonce }),
      })
      .toString();
  }

  // Discovers the provider now, to fail before the person is sent there. Throws OidcStepError('discovery').
  async ready(): Promise<void> {
    await this.client();
  }

  // The return (`current`: the callback address as the authorization request named it, with the
  // return's query): the code exchanged, then the claims of the ID token (OpenID Connect) and of
  // the userinfo answer together. Throws OidcStepError.
  async claims(current: URL, expected: { state: string; secrets: OidcFlowSecrets }): Promise<Record<string, unknown>> {
    const configuration = await this.client();
    const oidc = await openidClient();
    let stage: OidcStage = 'token';
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: expected.secrets.verifier,
        expectedState: expected.state,
        ...(expected.secrets.nonce && { expectedNonce: expected.secrets.nonce }),
      });
      stage = 'userinfo';
      const userinfo = configuration.serverMetadata().userinfo_endpoint;
      if (expected.secrets.nonce) {
        const idClaims = (tokens.claims() ?? {}) as Record<string, unknown>;
        const info = userinfo ? await oidc.fetchUserInfo(configuration, tokens.access_token, typeof idClaims.sub === 'string' ? idClaims.sub : oidc.skipSubjectCheck) : {};
        return { ...idClaims, ...info };
      }
      // Plain OAuth 2.0: the profile is the userinfo endpoint's JSON, whatever it names the subject.
      if (!userinfo) return {};
      const response = await oidc.fetchProtectedResource(configuration, tokens.access_token, new URL(userinfo), 'GET');
      if (!response.ok) throw Object.assign(new Error(`the userinfo endpoint answered ${response.status}`), { status: response.status });
      const body: unknown = await response.json();
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('the userinfo answer is not a JSON object');
      return body as Record<string, unknown>;
    } catch (err) {
      throw new OidcStepError(stage, err);
    }
  }

  // Discovery when the endpoints are not configured; the configured ones otherwise. Kept once it
  // worked; a failed discovery is tried again on the next sign-in.
  private client(): Promise<Oidc.Configuration> {
    const { issuer, endpoints, clientId, clientSecret } = this.settings;
    this.configuration ??= (async () => {
      const oidc = await openidClient();
      const url = new URL(issuer);
      // Plain http is for a provider on this machine in development and tests (refused in production at boot).
      const insecure = url.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
      if (!endpoints) return oidc.discovery(url, clientId, clientSecret, undefined, insecure);
      const configuration = new oidc.Configuration(
        {
          issuer,
          authorization_endpoint: endpoints.authorization,
          token_endpoint: endpoints.token,
          userinfo_endpoint: endpoints.userinfo,
          jwks_uri: endpoints.jwks,
          end_session_endpoint: endpoints.endSession,
        },
        clientId,
        clientSecret,
      );
      if (insecure) oidc.allowInsecureRequests(configuration);
      return configuration;
    })();
    this.configuration.catch(() => (this.configuration = undefined));
    return this.configuration.catch((err: unknown) => {
      throw new OidcStepError('discovery', err);
    });
  }
}
