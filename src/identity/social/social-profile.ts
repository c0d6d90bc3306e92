import type { SocialProfile } from './social-provider.js';

export type { SocialProfile } from './social-provider.js';

// Helpers the providers read their answers with, and the one check every profile passes.

export type Json = Record<string, unknown>;

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : undefined);
export const yes = (v: unknown): boolean => v === true || v === 'true';
export const email = (v: unknown): string | undefined => {
  const s = str(v)?.toLowerCase();
  return s && /^[^\s@]+@[^\s@]+$/.test(s) && s.length <= 254 ? s : undefined;
};

export type PartialProfile = Omit<Partial<SocialProfile>, 'emailVerified'> & { emailVerified?: boolean };

// An OpenID Connect userinfo answer or ID token (Google, LinkedIn, Apple).
export function fromClaims(c: Json): PartialProfile {
  const address = email(c.email);
  return {
    providerUserId: str(c.sub),
    email: address,
    emailVerified: !!address && yes(c.email_verified),
    fullname: str(c.name) ?? ([str(c.given_name), str(c.family_name)].filter(Boolean).join(' ') || undefined),
    avatar: str(c.picture),
  };
}

// An ID token's claims, unverified: for one that came straight from the provider's token
// endpoint over TLS, which OpenID Connect accepts in place of checking the signature (Core 3.1.3.7).
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

// What the service keeps of any provider's profile, built in or registered by an extension:
// undefined without a usable id; the email lowercased and well formed, the name bounded, the
// avatar https only.
export function normalizeProfile(p: PartialProfile | undefined): SocialProfile | undefined {
  const providerUserId = str(p?.providerUserId);
  if (!p || !providerUserId || providerUserId.length > 255) return undefined;
  const address = email(p.email);
  const fullname = str(p.fullname);
  const avatar = str(p.avatar);
  return {
    providerUserId,
    emailVerified: !!address && p.emailVerified === true,
    ...(address && { email: address }),
    ...(fullname && { fullname: fullname.slice(0, 200) }),
    ...(avatar && /^https:\/\//.test(avatar) && avatar.length <= 2048 && { avatar }),
  };
}
