import { email, str } from '../social-profile.js';
import { passportProvider } from './passport.js';

// Facebook: PKCE; it never says whether the email is verified.
export const facebook = passportProvider({
  name: 'facebook',
  load: async () => (await import('passport-facebook')).Strategy,
  pkce: true,
  options: () => ({ profileFields: ['id', 'displayName', 'email', 'photos'] }),
  profile: (profile) => {
    const json = profile?._json ?? {};
    return { providerUserId: str(json.id ?? profile?.id), email: email(json.email), emailVerified: false, fullname: str(json.name) ?? str(profile?.displayName), avatar: str(profile?.photos?.[0]?.value) };
  },
});
