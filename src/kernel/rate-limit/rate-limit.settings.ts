import { Type } from 'class-transformer';
import { IsInt, Min, ValidateNested } from 'class-validator';

export class RateLimitSetting {
  @IsInt()
  @Min(1)
  points: number;

  @IsInt()
  @Min(1)
  durationSeconds: number;
}

export class RateLimitsSettings {
  // Successful public registrations per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  registration: RateLimitSetting;

  // Refused public registrations (invalid input, duplicates...) per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  registrationFailures: RateLimitSetting;

  // Failed logins per (store, username); a success clears the count.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  loginPerUsername: RateLimitSetting;

  // Login attempts per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  loginPerIp: RateLimitSetting;

  // Refreshes per session (every refresh token of one login counts together).
  @ValidateNested()
  @Type(() => RateLimitSetting)
  refreshPerSession: RateLimitSetting;

  // Refreshes per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  refreshPerIp: RateLimitSetting;

  // Wrong authenticator-app or recovery codes per pending sign-in; at the last one the sign-in
  // ends (its window should outlast a sign-in left pending).
  @ValidateNested()
  @Type(() => RateLimitSetting)
  totpPerSession: RateLimitSetting;

  // Wrong authenticator-app or recovery codes per user, over all its sessions and the routes that
  // take a code (enrolment, disabling, new recovery codes); a right code clears the count.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  totpPerUser: RateLimitSetting;

  // Passwordless starts and code submissions per (store, address), known or not; a sign-in
  // clears the count.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  passwordlessPerAddress: RateLimitSetting;

  // Passwordless starts and submissions per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  passwordlessPerIp: RateLimitSetting;
}

// The named limiters (rate-limit.ts).
export class RateLimitSection {
  @ValidateNested()
  @Type(() => RateLimitsSettings)
  rateLimits: RateLimitsSettings;
}
