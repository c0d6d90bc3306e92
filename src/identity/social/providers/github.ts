import { email, str, yes } from '../social-profile.js';
import { passportProvider } from './passport.js';

// GitHub: PKCE; the verified address comes from /user/emails.
export const github = passportProvider({
  name: 'github',
  load: async () => (await import('passport-github2')).Strategy,
  pkce: true,
  scopes: ['read:user', 'user:email'],
  profile: (profile) => {
    const json = profile?._json ?? {};
    // With the `user:email` scope the strategy reads /user/emails, which says which are verified.
    const emails = profile?.emails ?? [];
    const verified = emails.find((e) => e.primary && yes(e.verified)) ?? emails.find((e) => yes(e.verified));
    const address = email(verified?.value ?? json.email);
    return {
      providerUserId: str(json.id ?? profile?.id),
      email: address,
      emailVerified: !!verified && address === email(verified.value),
      fullname: str(json.name) ?? str(json.login),
      avatar: str(json.avatar_url),
    };
  },
});
