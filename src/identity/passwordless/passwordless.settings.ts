import { Type } from 'class-transformer';
import { ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsInt, Max, Min, ValidateNested } from 'class-validator';

export const PASSWORDLESS_CHANNELS = ['email', 'sms'] as const;
export type PasswordlessChannel = (typeof PASSWORDLESS_CHANNELS)[number];
export const PASSWORDLESS_TYPES = ['byCode', 'byLink', 'both'] as const;
export type PasswordlessType = (typeof PASSWORDLESS_TYPES)[number];

// Sign-in by a one-time code or link sent to the email or mobile (POST /auth-api/passwordless/*).
// The mode (testMode answers the code) and the link's client address are the verification
// settings' (settings.verification.verificationMode, frontendUrl, frontendUrls).
export class PasswordlessLoginSettings {
  @IsBoolean()
  enabled: boolean;

  // Which addresses may sign in: `email` sends by mail, `sms` to the mobile.
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(PASSWORDLESS_CHANNELS, { each: true })
  channels: PasswordlessChannel[];

  // A 6-digit code, a link `{frontendUrl}/passwordlessLogin/{token}`, or both in one message
  // (either signs in; using one spends the other).
  @IsIn(PASSWORDLESS_TYPES)
  verificationType: PasswordlessType;

  // Seconds a code or link stays valid.
  @IsInt()
  @Min(10)
  @Max(86_400)
  expireTimeWindow: number;

  // Seconds before another code may be requested for the same address.
  @IsInt()
  @Min(0)
  @Max(86_400)
  resendTimeWindow: number;

  // An unknown address that completes the flow gets a new account in the targeted store (no
  // password: one can be set by a password reset). Off: its code never works.
  @IsBoolean()
  allowSignUp: boolean;
}

export class PasswordlessSection {
  // Sign-in by a code or link sent to the email or mobile (passwordless-settings.ts).
  @ValidateNested()
  @Type(() => PasswordlessLoginSettings)
  passwordlessLogin: PasswordlessLoginSettings;
}
