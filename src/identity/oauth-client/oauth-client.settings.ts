import { Type } from 'class-transformer';
import { IsBoolean, IsInt, Max, Min, ValidateNested } from 'class-validator';

// The OpenID Connect provider: the store's OAuth clients now, the provider's lifetimes for when
// it serves them (docs/oidc.md). The defaults are here, so a settings file may leave it out.
export class OidcProviderSettings {
  // false: the OAuth client routes answer 404 OidcProviderDisabled.
  @IsBoolean()
  enabled = true;

  @IsInt()
  @Min(1)
  @Max(1440)
  accessTokenMinutes = 10;

  @IsInt()
  @Min(1)
  @Max(1440)
  idTokenMinutes = 60;

  @IsInt()
  @Min(1)
  @Max(365)
  refreshTokenDays = 30;

  // A consent given once is not asked again for the same client and scopes.
  @IsBoolean()
  consentRemembered = true;
}

export class OidcProviderSection {
  @ValidateNested()
  @Type(() => OidcProviderSettings)
  oidcProvider: OidcProviderSettings = new OidcProviderSettings();
}
