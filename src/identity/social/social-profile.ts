import type { SocialProviderName } from '../../platform/config/social-settings.js';

// What the service keeps of a provider's answer. `emailVerified` is true only when the provider
// says so; it never links accounts by itself.
export interface SocialProfile {
  providerUserId: string;
  email?: string;
  emailVerified: boolean;
  fullname?: string;
  avatar?: string;
}

type Json = Record<string, unknown>;
interface PassportProfile {
  id?: string | number;
  displayName?: string;
  username?: string;
  emails?: { value: string; verified?: boolean | string; primary?: boolean }[];
  photos?: { value: string }[];
  _json?: Json;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : undefined);
const yes = (v: unknown): boolean => v === true || v === 'true';
const email = (v: unknown): string | undefined => {
  const s = str(v)?.toLowerCase();
  return s && /^[^\s@]+@[^\s@]+$/.test(s) && s.length <= 254 ? s : undefined;
};

// An OpenID Connect userinfo or ID token: Google, LinkedIn, Apple.
function fromClaims(c: Json): Omit<SocialProfile, 'providerUserId'> & { providerUserId?: string } {
  const address = email(c.email);
  return {
    providerUserId: str(c.sub),
    email: address,
    emailVerified: !!address && yes(c.email_verified),
    fullname: str(c.name) ?? ([str(c.given_name), str(c.family_name)].filter(Boolean).join(' ') || undefined),
    avatar: str(c.picture),
  };
}

// Apple's ID token comes straight from its token endpoint over TLS, which OpenID Connect
// accepts in place of checking the signature (Core 3.1.3.7).
export function decodeIdToken(idToken: unknown): Json {
  if (typeof idToken !== 'string') return {};
  const part = idToken.split('.')[1];
  if (!part) return {};
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Json;
  } catch {
    return {};
  }
}

export function normalizeProfile(provider: SocialProviderName, profile: PassportProfile | undefined, params: unknown): SocialProfile | undefined {
  const json: Json = profile?._json ?? {};
  let p: Partial<SocialProfile>;
  switch (provider) {
    case 'google':
    case 'linkedin':
      p = fromClaims(json);
      break;
    case 'apple':
      p = fromClaims(decodeIdToken(typeof params === 'string' ? params : (params as Json | undefined)?.id_token));
      break;
    case 'github': {
      // With the `user:email` scope the strategy reads /user/emails, which says which are verified.
      const emails = profile?.emails ?? [];
      const verified = emails.find((e) => e.primary && yes(e.verified)) ?? emails.find((e) => yes(e.verified));
      const address = email(verified?.value ?? json.email);
      p = {
        providerUserId: str(json.id ?? profile?.id),
        email: address,
        emailVerified: !!verified && address === email(verified.value),
        fullname: str(json.name) ?? str(json.login),
        avatar: str(json.avatar_url),
      };
      break;
    }
    case 'gitlab': {
      // GitLab's primary email must be confirmed; `confirmed_at` says it was.
      const address = email(json.email);
      p = { providerUserId: str(json.id ?? profile?.id), email: address, emailVerified: !!address && !!str(json.confirmed_at), fullname: str(json.name) ?? str(json.username), avatar: str(json.avatar_url) };
      break;
    }
    case 'facebook':
      p = { providerUserId: str(json.id ?? profile?.id), email: email(json.email), emailVerified: false, fullname: str(json.name) ?? str(profile?.displayName), avatar: str(profile?.photos?.[0]?.value) };
      break;
    case 'microsoft':
      p = { providerUserId: str(json.id ?? profile?.id), email: email(json.mail ?? json.userPrincipalName), emailVerified: false, fullname: str(json.displayName) ?? str(profile?.displayName) };
      break;
  }
  if (!p.providerUserId || p.providerUserId.length > 255) return undefined;
  return {
    providerUserId: p.providerUserId,
    emailVerified: !!p.emailVerified,
    ...(p.email && { email: p.email }),
    ...(p.fullname && { fullname: p.fullname.slice(0, 200) }),
    ...(p.avatar && /^https:\/\//.test(p.avatar) && p.avatar.length <= 2048 && { avatar: p.avatar }),
  };
}
