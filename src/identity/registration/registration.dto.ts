import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { StoreInput } from '../store/index.js';
import { UserProfileInput } from '../user/index.js';

// From a social sign-in result: completes the profile from the provider's and links the account.
class SocialRegistrationInput extends UserProfileInput {
  @ApiPropertyOptional({ description: 'From `RegisterNeededForSocialLogin`; the password is then optional.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  socialCode?: string;
}

export class RegisterStoreOwnerInput extends SocialRegistrationInput {
  @ApiProperty({ type: StoreInput })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => StoreInput)
  store: StoreInput;
}

export class RegisterStoreUserInput extends SocialRegistrationInput {}
