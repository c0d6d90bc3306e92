import { Type } from 'class-transformer';
import { Allow, IsBoolean, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateNested } from 'class-validator';

export const SOCIAL_PROVIDERS = ['google', 'apple', 'facebook', 'microsoft', 'linkedin', 'gitlab', 'github'] as const;
export type SocialProviderName = (typeof SOCIAL_PROVIDERS)[number];

// A secret written in place (discouraged) or `{ "env": "NAME" }`, read from the environment at boot.
export type SecretSetting = string | { env: string };

const HTTP_URL = /^https?:\/\/[^\s/]+(\/[^\s]*)?$/;
const URL_MESSAGE = 'must be an http(s) URL';

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

export class SocialProvidersSettings {
  @IsOptional() @ValidateNested() @Type(() => SocialProviderSetting) google?: SocialProviderSetting;
  @IsOptional() @ValidateNested() @Type(() => SocialProviderSetting) apple?: SocialProviderSetting;
  @IsOptional() @ValidateNested() @Type(() => SocialProviderSetting) facebook?: SocialProviderSetting;
  @IsOptional() @ValidateNested() @Type(() => SocialProviderSetting) microsoft?: SocialProviderSetting;
  @IsOptional() @ValidateNested() @Type(() => SocialProviderSetting) linkedin?: SocialProviderSetting;
  @IsOptional() @ValidateNested() @Type(() => SocialProviderSetting) gitlab?: SocialProviderSetting;
  @IsOptional() @ValidateNested() @Type(() => SocialProviderSetting) github?: SocialProviderSetting;
}

export class SocialLoginSettings {
  // Where the browser lands after the provider, with `provider` and `socialCode` or `error`;
  // `{FRONTEND_URL}/auth/callback` when absent.
  @IsOptional()
  @Matches(HTTP_URL, { message: `redirectUrl ${URL_MESSAGE}` })
  redirectUrl?: string;

  @ValidateNested()
  @Type(() => SocialProvidersSettings)
  providers: SocialProvidersSettings;
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
