import { Transform, Type, plainToInstance } from 'class-transformer';
import { Allow, ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateBy, ValidateNested } from 'class-validator';
import type { SecretSetting } from '../../platform/config/secrets.js';

// A sign-in provider's name: its path segment (`/auth-api/auth/<name>`) and the key its accounts
// are linked under. `sso` is single sign-on's key.
export const SOCIAL_PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
export const RESERVED_PROVIDER_NAMES: readonly string[] = ['sso'];

const HTTP_URL = /^https?:\/\/[^\s/]+(\/[^\s]*)?$/;
const URL_MESSAGE = 'must be an http(s) URL';

// An issuer identifier (OpenID Connect Discovery §2): an http(s) URL without query or fragment.
function isIssuer(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash && !url.username && !url.password && HTTP_URL.test(value);
  } catch {
    return false;
  }
}

// A built-in provider (`google`, `apple`...): what each needs is checked by its own file in
// src/identity/social/providers/.
export class SocialProviderSetting {
  @IsBoolean()
  enabled: boolean;

  @IsString()
  @MinLength(1)
  clientId: string;

  // Every provider but Apple.
  @IsOptional()
  @Allow()
  clientSecret?: SecretSetting;

  // Apple signs its client secret with a private key.
  @IsOptional()
  @IsString()
  teamId?: string;

  @IsOptional()
  @IsString()
  keyId?: string;

  @IsOptional()
  @Allow()
  privateKey?: SecretSetting;

  // The provider's default scopes when absent.
  @IsOptional()
  @IsString({ each: true })
  scopes?: string[];

  // Override the provider's addresses (self-hosted GitLab, tests).
  @IsOptional()
  @Matches(HTTP_URL, { message: `authorizationUrl ${URL_MESSAGE}` })
  authorizationUrl?: string;

  @IsOptional()
  @Matches(HTTP_URL, { message: `tokenUrl ${URL_MESSAGE}` })
  tokenUrl?: string;

  @IsOptional()
  @Matches(HTTP_URL, { message: `profileUrl ${URL_MESSAGE}` })
  profileUrl?: string;
}

// The claims a generic provider's profile is read from: our field → the claim's name (a dotted
// path reads a nested claim). Absent keys keep the OpenID Connect names.
export class OidcClaimsSetting {
  @IsOptional() @IsString() @MinLength(1) subject?: string;
  @IsOptional() @IsString() @MinLength(1) email?: string;
  @IsOptional() @IsString() @MinLength(1) emailVerified?: string;
  @IsOptional() @IsString() @MinLength(1) name?: string;
  @IsOptional() @IsString() @MinLength(1) givenName?: string;
  @IsOptional() @IsString() @MinLength(1) familyName?: string;
  @IsOptional() @IsString() @MinLength(1) picture?: string;
}

export const GENERIC_PROVIDER_TYPES = ['oidc'] as const;

// A generic OAuth 2.0 / OpenID Connect provider, configured by settings alone: `"type": "oidc"`.
export class OidcProviderSetting {
  @IsIn(GENERIC_PROVIDER_TYPES)
  type: (typeof GENERIC_PROVIDER_TYPES)[number];

  @IsBoolean()
  enabled: boolean;

  // The provider's issuer identifier: its discovery document (`{issuer}/.well-known/openid-configuration`)
  // gives the endpoints unless `authorizationUrl` and `tokenUrl` are both set; ID tokens must name it.
  @ValidateBy({ name: 'isIssuer', validator: { validate: isIssuer, defaultMessage: () => 'issuer must be an http(s) URL without query or fragment' } })
  issuer: string;

  @IsOptional()
  @Matches(HTTP_URL, { message: `authorizationUrl ${URL_MESSAGE}` })
  authorizationUrl?: string;

  @IsOptional()
  @Matches(HTTP_URL, { message: `tokenUrl ${URL_MESSAGE}` })
  tokenUrl?: string;

  // The userinfo endpoint.
  @IsOptional()
  @Matches(HTTP_URL, { message: `profileUrl ${URL_MESSAGE}` })
  profileUrl?: string;

  @IsOptional()
  @Matches(HTTP_URL, { message: `jwksUrl ${URL_MESSAGE}` })
  jwksUrl?: string;

  @IsString()
  @MinLength(1)
  clientId: string;

  @IsOptional()
  @Allow()
  clientSecret?: SecretSetting;

  // `openid email profile` when absent. Without `openid` the sign-in is plain OAuth 2.0: the
  // profile is the `profileUrl` answer alone.
  @IsOptional()
  @IsString({ each: true })
  scopes?: string[];

  @IsOptional()
  @ValidateNested()
  @Type(() => OidcClaimsSetting)
  claims?: OidcClaimsSetting;
}

export type SocialProviderEntry = SocialProviderSetting | OidcProviderSetting;

export const isGenericProvider = (entry: SocialProviderEntry): entry is OidcProviderSetting => 'type' in entry && entry.type !== undefined;

// `providers` as the settings file writes it (an object by name), or as validated settings hold
// it (a Map, when they are given again as overrides): a Map of entries, each of its own class.
function toProviderMap({ obj, key }: { obj: Record<string, unknown>; key: string }): unknown {
  const raw = obj[key];
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const entries = raw instanceof Map ? [...(raw as Map<string, unknown>)] : Object.entries(raw);
  return new Map(
    entries.map(([name, value]) => {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return [name, value];
      const cls = 'type' in value && (value as { type?: unknown }).type !== undefined ? OidcProviderSetting : SocialProviderSetting;
      return [name, plainToInstance(cls, value, { exposeDefaultValues: true })];
    }),
  );
}

const badProviderNames = (value: unknown): string[] =>
  value instanceof Map ? [...(value as Map<string, unknown>).keys()].filter((name) => !SOCIAL_PROVIDER_NAME.test(name) || RESERVED_PROVIDER_NAMES.includes(name)) : [];

export class SocialLoginSettings {
  // Where the browser lands after the provider, with `provider` and `socialCode` or `error`;
  // `{FRONTEND_URL}/auth/callback` when absent.
  @IsOptional()
  @Matches(HTTP_URL, { message: `redirectUrl ${URL_MESSAGE}` })
  redirectUrl?: string;

  // The callbacks of further client applications (a web app, a mobile app, an admin app): a
  // sign-in names one with the start's `redirectUrl` query parameter, which must equal it
  // exactly. Without `redirectUrl`, the first is where a sign-in that names none lands.
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ArrayUnique()
  @Matches(HTTP_URL, { each: true, message: `every entry of redirectUrls ${URL_MESSAGE}` })
  redirectUrls?: string[];

  // By name: a built-in provider (its name: `google`, `apple`, `facebook`, `microsoft`,
  // `linkedin`, `gitlab`, `github`) or a generic one (`"type": "oidc"`, any other name).
  @Type(() => Object)
  @Transform(toProviderMap)
  @ValidateBy({
    name: 'providerNames',
    validator: {
      validate: (value) => !badProviderNames(value).length,
      defaultMessage: (args) =>
        `provider names must be lowercase identifiers of at most 32 characters (letters, digits, _ and -), other than ${RESERVED_PROVIDER_NAMES.join(', ')}: ${badProviderNames(args?.value).join(', ')}`,
    },
  })
  @ValidateNested({ each: true })
  providers: Map<string, SocialProviderEntry>;
}

// Single sign-on through an external OpenID Connect provider; absent (null) when not used.
export class SsoSettings {
  // Shown to users and used as the `provider` of the callback redirect.
  @Matches(/^[A-Za-z][A-Za-z0-9_-]{0,62}$/, { message: 'ssoName must be an identifier' })
  ssoName: string;

  // Lifetime of a session that started with single sign-on.
  @IsInt()
  @Min(1)
  @Max(60 * 24 * 365)
  tokenPeriodInMinutes: number;

  @IsString()
  @MinLength(1)
  emailPropertyInProfile: string;

  @IsOptional()
  @IsString()
  userNamePropertyInProfile?: string;

  // Exposed as `SSOUserId` in the session; the `sub` claim when absent.
  @IsOptional()
  @IsString()
  ssoUserIdPropertyInProfile?: string;

  // The provider's issuer address; its discovery document is used when the paths are absent.
  @Matches(HTTP_URL, { message: `tokenHost ${URL_MESSAGE}` })
  tokenHost: string;

  @IsOptional() @Matches(/^\//, { message: 'authPath must start with /' }) authPath?: string;
  @IsOptional() @Matches(/^\//, { message: 'tokenPath must start with /' }) tokenPath?: string;
  @IsOptional() @Matches(/^\//, { message: 'userInfoPath must start with /' }) userInfoPath?: string;
  @IsOptional() @Matches(/^\//, { message: 'logoutPath must start with /' }) logoutPath?: string;

  // This service's callback as registered at the provider; `{PUBLIC_URL}/auth-api/sso/callback` when absent.
  @IsOptional()
  @Matches(HTTP_URL, { message: `redirectUrl ${URL_MESSAGE}` })
  redirectUrl?: string;

  @IsString()
  @MinLength(1)
  clientId: string;

  @Allow()
  clientSecret: SecretSetting;

  @IsOptional()
  @IsString({ each: true })
  scopes?: string[];
}

// Social login and single sign-on.
export class SocialSection {
  // Social login providers (social-settings.ts); a provider is used only when enabled.
  @ValidateNested()
  @Type(() => SocialLoginSettings)
  socialLogin: SocialLoginSettings;

  // Single sign-on through an OpenID Connect provider, or null.
  @IsOptional()
  @ValidateNested()
  @Type(() => SsoSettings)
  sso: SsoSettings | null;
}
