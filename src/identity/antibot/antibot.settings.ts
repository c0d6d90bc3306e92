import { Type } from 'class-transformer';
import { Allow, IsIn, IsInt, IsOptional, Matches, Max, Min, ValidateNested } from 'class-validator';

export const ANTI_BOT_PROVIDERS = ['none', 'altcha', 'hcaptcha', 'turnstile', 'recaptcha'] as const;

export type AntiBotProvider = (typeof ANTI_BOT_PROVIDERS)[number];

// A challenge before public registrations (and the verification starts that opt in).
export class AntiBotSettings {
  // none: off. altcha: our own proof-of-work challenge (GET /auth-api/challenge), no third party.
  // hcaptcha, turnstile, recaptcha: a token checked at the provider's verify URL.
  @IsIn(ANTI_BOT_PROVIDERS)
  provider: AntiBotProvider;

  // ALTCHA: the HMAC key signing challenges (required in staging and production: every replica
  // must share it). Others: the provider's secret key. Text, or { "env": "NAME" }.
  @Allow()
  secret: string | { env: string } | null;

  // The provider's verify endpoint; its public address when null.
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'verifyUrl must be an http(s) URL' })
  verifyUrl: string | null;

  // ALTCHA difficulty (largest number a client may have to try) and challenge lifetime.
  @IsInt()
  @Min(1000)
  @Max(10_000_000)
  altchaMaxNumber: number;

  @IsInt()
  @Min(10)
  @Max(3600)
  altchaExpireSeconds: number;
}

// The anti-bot challenge.
export class AntiBotSection {
  @ValidateNested()
  @Type(() => AntiBotSettings)
  antiBot: AntiBotSettings;
}
