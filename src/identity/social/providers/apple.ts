import type { IncomingMessage } from 'node:http';
import { decodeIdToken, fromClaims, type Json } from '../social-profile.js';
import { passportProvider, type StrategyClass } from './passport.js';

// The strategy's form fields: Apple tells the name once, in the form of the first return.
type AppleRequest = IncomingMessage & { body?: Record<string, unknown>; appleProfile?: { name?: { firstName?: unknown; lastName?: unknown } } };

// Sign in with Apple: the client secret is a JWT signed with the team's private key; Apple
// returns with a form post and gives the person's claims in its ID token only. No PKCE.
export const apple = passportProvider({
  name: 'apple',
  load: async () => {
    const AppleStrategy = (await import('passport-apple')).default;
    return (AppleStrategy as unknown as { Strategy?: StrategyClass }).Strategy ?? (AppleStrategy as unknown as StrategyClass);
  },
  pkce: false,
  formPostCallback: true,
  check: (entry, path) => {
    const setting = entry.setting as { teamId?: string; keyId?: string };
    return [
      ...(setting.teamId ? [] : [`${path}.teamId is required`]),
      ...(setting.keyId ? [] : [`${path}.keyId is required`]),
      ...(entry.privateKey ? [] : [`${path}.privateKey is required`]),
    ];
  },
  options: (entry) => {
    const setting = entry.setting as { teamId?: string; keyId?: string };
    return { teamID: setting.teamId, keyID: setting.keyId, privateKeyString: entry.privateKey };
  },
  // passport-apple writes its own random `state` into the options, which would make passport
  // skip the state store: the state is always the service's, bound to the store and the flow.
  adjust: (strategy) => {
    const own = strategy.authorizationParams.bind(strategy);
    strategy.authorizationParams = (options) => {
      const params = { ...own({ ...options }) };
      delete params.state;
      return params;
    };
  },
  // The first return carries the name as JSON, which the strategy parses unguarded.
  prepare: (request) => {
    const body = (request as AppleRequest).body;
    if (body?.user !== undefined && !isJsonObject(body.user)) delete body.user;
  },
  profile: (_profile, params, request) => {
    // The ID token comes straight from Apple's token endpoint (see decodeIdToken).
    const p = fromClaims(decodeIdToken(typeof params === 'string' ? params : (params as Json | undefined)?.id_token));
    const name = (request as AppleRequest).appleProfile?.name;
    const told = [name?.firstName, name?.lastName].filter((n) => typeof n === 'string' && n.trim()).join(' ');
    return { ...p, fullname: p.fullname ?? (told || undefined) };
  },
});

function isJsonObject(value: unknown): boolean {
  try {
    const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : undefined;
    return !!parsed && typeof parsed === 'object' && !Array.isArray(parsed);
  } catch {
    return false;
  }
}
