import { email, str } from '../social-profile.js';
import { passportProvider, type StrategyClass } from './passport.js';

// GitLab (gitlab.com or self-hosted through the address settings): PKCE.
export const gitlab = passportProvider({
  name: 'gitlab',
  load: async () => ((await import('passport-gitlab2')).default as unknown as { Strategy: StrategyClass }).Strategy,
  pkce: true,
  profile: (profile) => {
    const json = profile?._json ?? {};
    // GitLab's primary email must be confirmed; `confirmed_at` says it was.
    const address = email(json.email);
    return { providerUserId: str(json.id ?? profile?.id), email: address, emailVerified: !!address && !!str(json.confirmed_at), fullname: str(json.name) ?? str(json.username), avatar: str(json.avatar_url) };
  },
});
