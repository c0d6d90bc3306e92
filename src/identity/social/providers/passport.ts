import type { IncomingMessage } from 'node:http';
import type { ResolvedProvider } from '../social-secrets.js';
import type { SocialProviderSetting } from '../social.settings.js';
import { normalizeProfile, type Json, type PartialProfile } from '../social-profile.js';
import type { SocialAuthorizationRequest, SocialCallback, SocialProfile, SocialProvider } from '../social-provider.js';
import { callbackPath, type SocialProviderKind } from './kind.js';

// A provider through its maintained passport strategy (a passport-oauth2 subclass), run here
// without passport's middleware: the strategy builds the authorization address and exchanges
// the code; the state lives in the service's flows, so any replica finishes a flow.

// The strategies are untyped CommonJS constructors.
export type StrategyClass = new (options: any, verify: (...args: any[]) => void) => object;

// The parts of passport-oauth2's strategy a provider adjusts.
type OAuth2Get = (url: string, accessToken: string, cb: (err: unknown, body: string) => void) => void;
export interface OAuth2Internals {
  _oauth2: { get: OAuth2Get; useAuthorizationHeaderforGET(use: boolean): void };
  userProfile(accessToken: string, done: (err: unknown, profile?: unknown) => void): void;
  authorizationParams(options: Record<string, unknown>): Record<string, unknown>;
}

// A strategy as passport runs it: passport-strategy's actions, and the state store it consults.
interface StrategyRun {
  authenticate(req: IncomingMessage, options: Record<string, unknown>): void;
  redirect(url: string): void;
  success(user: unknown): void;
  fail(challenge?: unknown): void;
  error(err: unknown): void;
  pass(): void;
  _stateStore: unknown;
}

// The profile object the strategies build.
export interface PassportProfile {
  id?: string | number;
  displayName?: string;
  username?: string;
  emails?: { value: string; verified?: boolean | string; primary?: boolean }[];
  photos?: { value: string }[];
  _json?: Json;
}

export interface PassportProviderSpec {
  name: string;
  load(): Promise<StrategyClass>;
  // Whether the provider takes PKCE (S256).
  pkce: boolean;
  // Asked for when the settings name no `scopes`.
  scopes?: string[];
  formPostCallback?: boolean;
  // What the settings must hold besides the client id; the client secret when absent.
  check?(entry: ResolvedProvider, path: string): string[];
  // Further options of the strategy.
  options?(entry: ResolvedProvider): Record<string, unknown>;
  // Changes to the built strategy (another profile address...).
  adjust?(strategy: OAuth2Internals, setting: SocialProviderSetting): void;
  // The return's request before the strategy reads it.
  prepare?(request: IncomingMessage): void;
  // Our fields from the strategy's profile and the token response (`params`).
  profile(profile: PassportProfile | undefined, params: unknown, request: IncomingMessage): PartialProfile;
}

// The kind of a provider run by its passport strategy.
export function passportProvider(spec: PassportProviderSpec): SocialProviderKind {
  return {
    key: spec.name,
    check: (entry, path) => (spec.check ? spec.check(entry, path) : entry.clientSecret ? [] : [`${path}.clientSecret is required`]),
    async create(entry, config) {
      const Strategy = await spec.load();
      const s = entry.setting as SocialProviderSetting;
      const urls = {
        ...(s.authorizationUrl && { authorizationURL: s.authorizationUrl }),
        ...(s.tokenUrl && { tokenURL: s.tokenUrl }),
        ...(s.profileUrl && { userProfileURL: s.profileUrl, profileURL: s.profileUrl, userEmailURL: `${s.profileUrl.replace(/\/$/, '')}/emails` }),
      };
      const options = {
        clientID: s.clientId,
        clientSecret: entry.clientSecret,
        // Relative without PUBLIC_URL: the strategy resolves it against the request.
        callbackURL: config.publicUrl(callbackPath(entry.name)),
        passReqToCallback: true,
        // A store object: the run below puts the flow's own in its place.
        store: {},
        state: true,
        pkce: spec.pkce,
        ...((s.scopes ?? spec.scopes) && { scope: s.scopes ?? spec.scopes }),
        ...spec.options?.(entry),
        ...urls,
      };
      // Arity 6: the verify callback also gets the token response (Apple's ID token is in it).
      const verify = (req: IncomingMessage, _accessToken: string, _refreshToken: string, params: unknown, profile: unknown, done: (err: unknown, user?: unknown) => void) => {
        try {
          done(null, normalizeProfile(spec.profile(profile as PassportProfile | undefined, params, req)) ?? false);
        } catch (err) {
          done(err);
        }
      };
      const strategy = new Strategy(options, verify) as OAuth2Internals;
      // The access token goes in the Authorization header, never in a URL (where logs keep it).
      strategy._oauth2.useAuthorizationHeaderforGET(true);
      spec.adjust?.(strategy, s);
      return new PassportSocialProvider(entry.name, strategy, spec, [entry.clientSecret]);
    },
  };
}

class PassportSocialProvider implements SocialProvider {
  readonly formPostCallback?: boolean;

  constructor(
    readonly name: string,
    private readonly strategy: OAuth2Internals,
    private readonly spec: PassportProviderSpec,
    readonly secrets: readonly (string | undefined)[],
  ) {
    this.formPostCallback = spec.formPostCallback;
  }

  authorizationUrl(start: SocialAuthorizationRequest): Promise<string> {
    return this.run(start.request, {
      // passport-oauth2's state store interface; the argument counts matter: passport reads them.
      store(_req: unknown, verifier: string | undefined, _state: unknown, _meta: unknown, cb: (err: unknown, state?: string) => void) {
        start.beginFlow(verifier ? { verifier } : {}).then((state) => cb(null, state), cb);
      },
      verify(_req: unknown, _provided: unknown, _meta: unknown, cb: (err: unknown) => void) {
        cb(new Error('not a return'));
      },
    }).then((outcome) => {
      if ('redirect' in outcome) return outcome.redirect;
      throw 'error' in outcome ? outcome.error : new Error('the strategy did not redirect to the provider');
    });
  }

  async profile(callback: SocialCallback): Promise<SocialProfile | undefined> {
    this.spec.prepare?.(callback.request);
    const outcome = await this.run(callback.request, {
      store(_req: unknown, _verifier: unknown, _state: unknown, _meta: unknown, cb: (err: unknown) => void) {
        cb(new Error('not a start'));
      },
      // The service took the flow of this state already: its PKCE verifier, if any, goes on.
      verify(_req: unknown, _provided: unknown, _meta: unknown, cb: (err: unknown, ok?: string | boolean) => void) {
        cb(null, callback.flow.verifier ?? true);
      },
    });
    if ('error' in outcome) throw outcome.error;
    return 'user' in outcome ? (outcome.user as SocialProfile) : undefined;
  }

  // One authentication by the strategy, as passport's middleware runs it: a copy of the strategy
  // with the actions that end it, and this run's state store.
  private run(request: IncomingMessage, stateStore: object): Promise<{ redirect: string } | { user: unknown } | { failed: true } | { error: unknown }> {
    return new Promise((resolve) => {
      const run = Object.create(this.strategy) as StrategyRun;
      run._stateStore = stateStore;
      run.redirect = (url) => resolve({ redirect: url });
      run.success = (user) => resolve({ user });
      run.fail = () => resolve({ failed: true });
      run.pass = () => resolve({ failed: true });
      run.error = (error) => resolve({ error });
      run.authenticate(request, {});
    });
  }
}
