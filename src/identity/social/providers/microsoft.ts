import { email, str } from '../social-profile.js';
import { passportProvider, type StrategyClass } from './passport.js';

// Microsoft (Graph's /me): PKCE; it never says whether the email is verified.
export const microsoft = passportProvider({
  name: 'microsoft',
  load: async () => ((await import('passport-microsoft')).default as unknown as { Strategy: StrategyClass }).Strategy,
  pkce: true,
  scopes: ['user.read'],
  // passport-microsoft builds its profile address from a Graph API base; a configured
  // profileUrl replaces that address whole.
  adjust: (strategy, setting) => {
    const profileUrl = setting.profileUrl;
    if (!profileUrl) return;
    const get = strategy._oauth2.get.bind(strategy._oauth2);
    strategy._oauth2.get = (_url, accessToken, cb) => get(profileUrl, accessToken, cb);
  },
  profile: (profile) => {
    const json = profile?._json ?? {};
    return { providerUserId: str(json.id ?? profile?.id), email: email(json.mail ?? json.userPrincipalName), emailVerified: false, fullname: str(json.displayName) ?? str(profile?.displayName) };
  },
});
