import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { SOCIAL_PROVIDERS } from '../../platform/config/social-settings.js';
import { SessionResponse } from '../session/index.js';

export class SocialStartQuery {
  @ApiPropertyOptional({ description: 'Where the browser lands afterwards; must equal the configured address exactly.' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  redirectUrl?: string;
}

export class SocialProviderParam {
  @ApiProperty({ enum: SOCIAL_PROVIDERS })
  @IsIn(SOCIAL_PROVIDERS, { message: `provider must be one of ${SOCIAL_PROVIDERS.join(', ')}` })
  provider: string;
}

export class SocialLoginResultInput {
  @ApiProperty({ description: 'The code from the callback address; valid 180 s, once.' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  socialCode: string;
}

// The answer of social-login-result: the login session (as `POST /login`), or what a
// registration needs.
export class SocialLoginResultResponse extends SessionResponse {
  @ApiPropertyOptional({ enum: ['RegisterNeededForSocialLogin'], description: 'present when the account must be registered first' }) type?: string;
  @ApiPropertyOptional({ description: 'a new socialCode for the registration' }) socialCode?: string;
  @ApiPropertyOptional({ description: '`provider`, `email`, `emailVerified`, `fullname`, `avatar` from the provider', type: 'object', additionalProperties: true }) accountInfo?: Record<string, unknown>;
  @ApiPropertyOptional({ description: 'single sign-on: milliseconds spent with the provider' }) ssoTime?: number;
  @ApiPropertyOptional({ description: 'A token for the avatar bucket.' }) userBucketToken?: string;
}
