import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, ValidateNested } from 'class-validator';
import { StoreInput } from '../store/store.dto.js';
import { UserProfileInput } from '../user/user.dto.js';

export class RegisterStoreOwnerInput extends UserProfileInput {
  @ApiProperty({ type: StoreInput })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => StoreInput)
  store: StoreInput;
}

export class RegisterStoreUserInput extends UserProfileInput {}
