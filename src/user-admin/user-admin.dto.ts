import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, IsUrl, IsUUID, MaxLength } from 'class-validator';
import { URL_OPTIONS } from '../store/store.dto.js';
import { trim, UserProfileInput } from '../user/user.dto.js';

const ROLE_DESCRIPTION = 'A role value, or an array of them when `usersHaveMultipleRoles`. Admins only.';

export class CreateUserInput extends UserProfileInput {
  @ApiPropertyOptional({ description: ROLE_DESCRIPTION })
  @IsOptional()
  roleId?: string | string[];
}

// What PATCH may change. Identifiers change through verification flows, not here.
export class UpdateUserInput {
  @ApiPropertyOptional() @IsOptional() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(200) fullname?: string;
  @ApiPropertyOptional() @IsOptional() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(100) name?: string;
  @ApiPropertyOptional() @IsOptional() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(100) surname?: string;
  @ApiPropertyOptional() @IsOptional() @IsUrl(URL_OPTIONS) @MaxLength(2048) avatar?: string;

  @ApiPropertyOptional({ description: 'New password, 8 characters to 72 bytes.' })
  @IsOptional()
  @IsString()
  password?: string;

  @ApiPropertyOptional({ description: 'Required when changing your own password.' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  currentPassword?: string;

  @ApiPropertyOptional({ description: ROLE_DESCRIPTION })
  @IsOptional()
  roleId?: string | string[];

  @ApiPropertyOptional({ description: 'Admins only. Deactivating ends every session of the user.' })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}

export class UserIdParam {
  @IsUUID()
  id: string;
}
