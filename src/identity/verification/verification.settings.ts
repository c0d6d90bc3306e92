import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsInt, IsOptional, Matches, Max, Min, ValidateNested } from 'class-validator';

export const VERIFICATION_FLOWS = [
  'email-verification',
  'mobile-verification',
  'password-reset-by-email',
  'password-reset-by-mobile',
  'email-2factor-verification',
  'mobile-2factor-verification',
] as const;
export type VerificationFlow = (typeof VERIFICATION_FLOWS)[number];

// A client application's address: http(s), no query or fragment (a link's path is appended).
export const FRONTEND_URL = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;

export const VERIFICATION_TYPES = ['byCode', 'byLink'] as const;
export const VERIFICATION_MODES = ['testMode', 'liveMode'] as const;

// One flow. Missing fields take the shipped defaults (config/settings.default.json).
export class VerificationFlowSetting {
  @IsBoolean()
  enabled: boolean;

  // Seconds before another code may be requested for the same identifier (or session).
  @IsInt()
  @Min(0)
  @Max(86_400)
  resendTimeWindow: number;

  // Seconds a code or link stays valid.
  @IsInt()
  @Min(10)
  @Max(30 * 86_400)
  expireTimeWindow: number;

  @IsIn(VERIFICATION_TYPES)
  verificationType: (typeof VERIFICATION_TYPES)[number];

  // A notification template name (notifications.templates, or a shipped one).
  @Matches(/^[A-Za-z][A-Za-z0-9_.-]{0,62}$/, { message: 'verificationTemplate must be a template name' })
  verificationTemplate: string;
}

export class VerificationFlowsSettings {
  @ValidateNested()
  @Type(() => VerificationFlowSetting)
  'email-verification': VerificationFlowSetting;

  @ValidateNested()
  @Type(() => VerificationFlowSetting)
  'mobile-verification': VerificationFlowSetting;

  @ValidateNested()
  @Type(() => VerificationFlowSetting)
  'password-reset-by-email': VerificationFlowSetting;

  @ValidateNested()
  @Type(() => VerificationFlowSetting)
  'password-reset-by-mobile': VerificationFlowSetting;

  @ValidateNested()
  @Type(() => VerificationFlowSetting)
  'email-2factor-verification': VerificationFlowSetting;

  @ValidateNested()
  @Type(() => VerificationFlowSetting)
  'mobile-2factor-verification': VerificationFlowSetting;
}

export class VerificationSettings {
  // testMode also returns the code in the `start` answer; liveMode sends it only.
  @IsIn(VERIFICATION_MODES)
  verificationMode: (typeof VERIFICATION_MODES)[number];

  // The client application: links point to `{frontendUrl}/emailVerification/{hash}` and the like.
  @Matches(FRONTEND_URL, { message: 'frontendUrl must be an http(s) address without query or fragment' })
  frontendUrl: string;

  // Further client applications (a mobile app's web page, an admin app): the request that sends
  // a link names one with its `frontendUrl` field, exactly, and the link points there instead.
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ArrayUnique()
  @Matches(FRONTEND_URL, { each: true, message: 'every entry of frontendUrls must be an http(s) address without query or fragment' })
  frontendUrls?: string[];

  @ValidateNested()
  @Type(() => VerificationFlowsSettings)
  flows: VerificationFlowsSettings;
}

// Verification flows and what logins must have verified.
export class VerificationSection {
  @IsBoolean()
  emailVerificationRequiredForLogin: boolean;

  @IsBoolean()
  mobileVerificationRequiredForLogin: boolean;

  @IsBoolean()
  email2FARequiredForLogin: boolean;

  @IsBoolean()
  mobile2FARequiredForLogin: boolean;

  // Email and mobile verification, password reset and second factors (verification-settings.ts).
  @ValidateNested()
  @Type(() => VerificationSettings)
  verification: VerificationSettings;
}
