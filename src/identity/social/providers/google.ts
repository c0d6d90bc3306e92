import { fromClaims } from '../social-profile.js';
import { passportProvider } from './passport.js';

// Google: OpenID Connect claims from its userinfo, PKCE.
export const google = passportProvider({
  name: 'google',
  load: async () => (await import('passport-google-oauth20')).Strategy,
  pkce: true,
  scopes: ['openid', 'email', 'profile'],
  profile: (profile) => fromClaims(profile?._json ?? {}),
});
