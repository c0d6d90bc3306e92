import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { PageQuery } from '../../kernel/paging.js';
import { IsImageUrl, IsLanguageTag, IsOmittable } from '../../kernel/validation.js';
import { trim, UserProfileInput } from '../user/index.js';

const ROLE_DESCRIPTION = 'A role value, or an array of them when `usersHaveMultipleRoles`. Admins only.';

export class CreateUserInput extends UserProfileInput {
  @ApiPropertyOptional({ description: ROLE_DESCRIPTION })
  @IsOptional()
  roleId?: string | string[];
}

// What PATCH may change. Identifiers change through verification flows, not here. Absent means
// unchanged; null is refused, except for avatar.
export class UpdateUserInput {
  @ApiPropertyOptional() @IsOmittable() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(200) fullname?: string;
  @ApiPropertyOptional() @IsOmittable() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(100) name?: string;
  @ApiPropertyOptional() @IsOmittable() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(100) surname?: string;

  @ApiPropertyOptional({ nullable: true, description: 'Image URL; null goes back to a generated avatar. An uploaded avatar replaced or removed here is deleted from the bucket.' })
  @ValidateIf((_o: object, value: unknown) => value !== undefined && value !== null)
  @IsImageUrl()
  @MaxLength(2048)
  avatar?: string | null;

  @ApiPropertyOptional({ description: 'New password, 8 characters to 72 bytes.' })
  @IsOmittable()
  @IsString()
  password?: string;

  @ApiPropertyOptional({ description: 'Required when changing your own password.' })
  @IsOmittable()
  @IsString()
  @MaxLength(1024)
  currentPassword?: string;

  @ApiPropertyOptional({ description: ROLE_DESCRIPTION })
  @IsOptional()
  roleId?: string | string[];

  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'pt-BR', description: 'Preferred language of notifications (BCP 47); null clears it.' })
  @IsOptional()
  @IsLanguageTag()
  language?: string | null;

  @ApiPropertyOptional({ description: 'Admins only. Deactivating ends every session of the user.' })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;
}

// The users list: a page, of the users matching `search` when it is given.
export class UserListQuery extends PageQuery {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 100,
    example: 'ada',
    description: 'Only users whose email, mobile, full name, name or surname contains this text, in any case (`%` and `_` are plain characters).',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  search?: string;
}

export class UserIdParam {
  @IsUUID()
  id: string;
}
