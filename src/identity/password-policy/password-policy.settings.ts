import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, Matches, Max, Min, ValidateNested } from 'class-validator';

export const BREACHED_CHECK_UNAVAILABLE = ['allow', 'refuse'] as const;

// The k-anonymity range service of known breached passwords (Have I Been Pwned's by default):
// only the first 5 hex characters of a password's SHA-1 are sent to it.
export class BreachedCheckSettings {
  // The prefix is appended: `{rangeUrl}{5 hex characters}`.
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, { message: 'rangeUrl must be an http(s) address without query or fragment' })
  rangeUrl: string;

  // How long one lookup may take before the service counts as unavailable.
  @IsInt()
  @Min(100)
  @Max(30_000)
  timeoutMs: number;

  // A slow or failing range service: accept the password, or refuse it (503 PasswordCheckUnavailable).
  @IsIn(BREACHED_CHECK_UNAVAILABLE)
  onUnavailable: (typeof BREACHED_CHECK_UNAVAILABLE)[number];
}

// What a new password must be, wherever one is set (registrations, user creation, change,
// reset); never checked at login. Missing fields take the shipped defaults.
export class PasswordPolicySettings {
  // Characters. Never below 8: login still accepts any stored password of 8 characters or more.
  @IsInt()
  @Min(8)
  @Max(64)
  minLength: number;

  // zxcvbn score (0 too guessable ... 4 very unguessable) a new password must reach.
  @IsInt()
  @Min(0)
  @Max(4)
  minScore: number;

  // Refuse passwords the range service knows from breaches.
  @IsBoolean()
  rejectBreached: boolean;

  @ValidateNested()
  @Type(() => BreachedCheckSettings)
  breachedCheck: BreachedCheckSettings;

  // The user's email, mobile, names and store name count as guessable words in the strength check.
  @IsBoolean()
  userInputs: boolean;
}

export class PasswordPolicySection {
  // What a new password must be: length, strength, breaches (password-policy-settings.ts).
  @ValidateNested()
  @Type(() => PasswordPolicySettings)
  passwordPolicy: PasswordPolicySettings;
}
