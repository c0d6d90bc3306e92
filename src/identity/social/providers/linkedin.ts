import { fromClaims } from '../social-profile.js';
import { passportProvider, type StrategyClass } from './passport.js';

// LinkedIn retired the profile API its strategy reads; its OpenID userinfo replaces it.
const LINKEDIN_USERINFO = 'https://api.linkedin.com/v2/userinfo';

// LinkedIn: OpenID Connect claims from its userinfo; no PKCE.
export const linkedin = passportProvider({
  name: 'linkedin',
  load: async () => ((await import('passport-linkedin-oauth2')).default as unknown as { Strategy: StrategyClass }).Strategy,
  pkce: false,
  scopes: ['openid', 'profile', 'email'],
  adjust: (strategy, setting) => {
    const profileUrl = setting.profileUrl ?? LINKEDIN_USERINFO;
    strategy.userProfile = (accessToken, done) =>
      strategy._oauth2.get(profileUrl, accessToken, (err, body) => {
        if (err) return done(err);
        try {
          done(null, { _json: JSON.parse(body) });
        } catch (e) {
          done(e);
        }
      });
  },
  profile: (profile) => fromClaims(profile?._json ?? {}),
});
