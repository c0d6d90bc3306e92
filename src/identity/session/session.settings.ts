import { Type } from 'class-transformer';
import { IsArray, IsInt, IsNumber, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { WebAuthnSettings } from './webauthn.settings.js';

// Sessions: their lifetime, how many a user holds, how many are cached, and what a role's
// users must enrol before a session opens the routes (an app factor: TOTP, or a passkey when
// `webauthn` is set; the passkey feature reads `webauthn` from here, as it sits above sessions).
export class SessionSection {
  // Session lifetime; also the access token's while accessTokenMinutes is null.
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.001)
  @Max(3650)
  tokenPeriodInDays: number;

  // Live sessions a user may hold; a login beyond it ends the user's oldest session.
  @IsInt()
  @Min(1)
  @Max(10000)
  maxSessionsPerUser: number;

  // Sessions kept in the in-process cache when Redis is not configured.
  @IsInt()
  @Min(100)
  sessionCacheSize: number;

  // Roles whose users must hold an app factor (TOTP or passkey): until they enrol one, only
  // the enrolment routes, /currentuser and logout answer them.
  @IsArray()
  @IsString({ each: true })
  mfaRequiredForRoles: string[];

  // Passkeys, or null (their routes answer 404 WebAuthnNotConfigured).
  @IsOptional()
  @ValidateNested()
  @Type(() => WebAuthnSettings)
  webauthn: WebAuthnSettings | null;
}
