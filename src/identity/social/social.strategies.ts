import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import type { SocialProviderName } from '../../platform/config/social-settings.js';
import type { ResolvedProvider } from '../../platform/config/social-secrets.js';
import { normalizeProfile, type SocialProfile } from './social-profile.js';
import type { SocialFlow } from './social.service.js';

// The strategies are untyped CommonJS constructors.
type StrategyClass = new (...args: any[]) => any;

// The parts of passport-oauth2's strategy that are adjusted below.
type OAuth2Get = (url: string, accessToken: string, cb: (err: unknown, body: string) => void) => void;
interface OAuth2Internals {
  _oauth2: { get: OAuth2Get; useAuthorizationHeaderforGET(use: boolean): void };
  userProfile(accessToken: string, done: (err: unknown, profile?: unknown) => void): void;
}

// Each provider's maintained strategy, and whether it takes PKCE. A strategy's package is loaded
// only when the settings configure that provider (see SocialStrategies).
const STRATEGIES: Record<SocialProviderName, { load: () => Promise<StrategyClass>; pkce: boolean }> = {
  google: { load: async () => (await import('passport-google-oauth20')).Strategy, pkce: true },
  apple: {
    load: async () => {
      const AppleStrategy = (await import('passport-apple')).default;
      return (AppleStrategy as unknown as { Strategy?: StrategyClass }).Strategy ?? (AppleStrategy as unknown as StrategyClass);
    },
    pkce: false,
  },
  facebook: { load: async () => (await import('passport-facebook')).Strategy, pkce: true },
  microsoft: { load: async () => ((await import('passport-microsoft')).default as unknown as { Strategy: StrategyClass }).Strategy, pkce: true },
  linkedin: { load: async () => ((await import('passport-linkedin-oauth2')).default as unknown as { Strategy: StrategyClass }).Strategy, pkce: false },
  gitlab: { load: async () => ((await import('passport-gitlab2')).default as unknown as { Strategy: StrategyClass }).Strategy, pkce: true },
  github: { load: async () => (await import('passport-github2')).Strategy, pkce: true },
};

// The strategy classes of the configured providers, loaded at boot by SocialModule's factory.
export class SocialStrategies {
  private constructor(private readonly classes: ReadonlyMap<SocialProviderName, StrategyClass>) {}

  static async load(providers: Iterable<SocialProviderName>): Promise<SocialStrategies> {
    const classes = new Map<SocialProviderName, StrategyClass>();
    for (const provider of new Set(providers)) classes.set(provider, await STRATEGIES[provider].load());
    return new SocialStrategies(classes);
  }

  get(provider: SocialProviderName): StrategyClass {
    const strategy = this.classes.get(provider);
    if (!strategy) throw new Error(`social login: the ${provider} strategy is not loaded`);
    return strategy;
  }
}

interface AppleUser {
  name?: { firstName?: unknown; lastName?: unknown };
}

// Where the flow of a request lives between our state store and the verify callback.
export type FlowRequest = Request & { socialFlow?: SocialFlow; socialRedirectUrl?: string; ctx: { store?: { id: string }; requestId?: string } };

// passport-oauth2's state store interface, backed by the database so any replica can finish
// a flow another one started. The argument counts matter: passport reads them.
export interface FlowStore {
  begin(req: FlowRequest, verifier: string | undefined): Promise<string>;
  take(req: FlowRequest, state: unknown): Promise<SocialFlow | undefined>;
}

function stateStore(flows: FlowStore) {
  return {
    store(req: FlowRequest, verifier: string | undefined, _state: unknown, _meta: unknown, cb: (err: unknown, state?: string) => void) {
      flows.begin(req, verifier).then((state) => cb(null, state), cb);
    },
    verify(req: FlowRequest, provided: unknown, _meta: unknown, cb: (err: unknown, ok?: string | boolean, info?: unknown) => void) {
      flows.take(req, provided).then((flow) => {
        if (!flow) return cb(null, false, { message: 'state_mismatch' });
        req.socialFlow = flow;
        cb(null, flow.verifier ?? true, flow);
      }, cb);
    },
  };
}

// LinkedIn retired the profile API this strategy reads; its OpenID userinfo replaces it.
const LINKEDIN_USERINFO = 'https://api.linkedin.com/v2/userinfo';

// The strategy of one provider, registered with passport under `name` (unique per application,
// so two applications in one process never share one).
export function createSocialStrategy(name: string, provider: ResolvedProvider, callbackURL: string, flows: FlowStore, strategies: SocialStrategies): unknown {
  const { pkce } = STRATEGIES[provider.name];
  const strategy = strategies.get(provider.name);
  const s = provider.setting;
  const urls = {
    ...(s.authorizationUrl && { authorizationURL: s.authorizationUrl }),
    ...(s.tokenUrl && { tokenURL: s.tokenUrl }),
    ...(s.profileUrl && { userProfileURL: s.profileUrl, profileURL: s.profileUrl, userEmailURL: `${s.profileUrl.replace(/\/$/, '')}/emails` }),
  };
  const options = {
    clientID: s.clientId,
    clientSecret: provider.clientSecret,
    callbackURL,
    passReqToCallback: true,
    store: stateStore(flows),
    state: true,
    pkce,
    ...(s.scopes && { scope: s.scopes }),
    ...(provider.name === 'github' && !s.scopes && { scope: ['read:user', 'user:email'] }),
    ...(provider.name === 'google' && !s.scopes && { scope: ['openid', 'email', 'profile'] }),
    ...(provider.name === 'linkedin' && !s.scopes && { scope: ['openid', 'profile', 'email'] }),
    ...(provider.name === 'microsoft' && !s.scopes && { scope: ['user.read'] }),
    ...(provider.name === 'facebook' && { profileFields: ['id', 'displayName', 'email', 'photos'] }),
    ...(provider.name === 'apple' && { teamID: s.teamId, keyID: s.keyId, privateKeyString: provider.privateKey }),
    ...urls,
  };

  // Arity 6: the verify callback also gets the token response (Apple's ID token is in it).
  class SocialStrategy extends PassportStrategy(strategy, name, 6) {
    constructor() {
      super(options);
      // The access token goes in the Authorization header, never in a URL (where logs keep it).
      const self = this as unknown as OAuth2Internals;
      self._oauth2.useAuthorizationHeaderforGET(true);
      // passport-microsoft builds its profile address from a Graph API base; a configured
      // profileUrl replaces that address whole.
      if (provider.name === 'microsoft' && s.profileUrl) {
        const get = self._oauth2.get.bind(self._oauth2);
        const profileUrl = s.profileUrl;
        self._oauth2.get = (_url, accessToken, cb) => get(profileUrl, accessToken, cb);
      }
      if (provider.name === 'linkedin') {
        const profileUrl = s.profileUrl ?? LINKEDIN_USERINFO;
        self.userProfile = (accessToken, done) =>
          self._oauth2.get(profileUrl, accessToken, (err, body) => {
            if (err) return done(err);
            try {
              done(null, { _json: JSON.parse(body) });
            } catch (e) {
              done(e);
            }
          });
      }
    }

    // passport-apple writes its own random `state` into the options, which would make passport
    // skip the state store: the state is always the store's, bound to the store and the flow.
    authorizationParams(options: Record<string, unknown>): Record<string, unknown> {
      const params = { ...(strategy.prototype.authorizationParams.call(this, { ...options }) as Record<string, unknown>) };
      delete params.state;
      return params;
    }

    validate(req: FlowRequest & { appleProfile?: AppleUser }, _accessToken: string, _refreshToken: string, params: unknown, profile: unknown): SocialProfile | false {
      const normalized = normalizeProfile(provider.name, profile as Parameters<typeof normalizeProfile>[1], params);
      // Apple tells the name once, in the form of the first return, never in its ID token.
      const name = [req.appleProfile?.name?.firstName, req.appleProfile?.name?.lastName].filter((n) => typeof n === 'string' && n.trim()).join(' ');
      if (normalized && provider.name === 'apple' && name && !normalized.fullname) normalized.fullname = name.slice(0, 200);
      return normalized ?? false;
    }
  }
  return new SocialStrategy();
}
