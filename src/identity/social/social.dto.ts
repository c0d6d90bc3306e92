import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { SessionResponse } from '../session/index.js';

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
