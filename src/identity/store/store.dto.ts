import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsImageUrl, IsLanguageTag, IsOmittable } from '../../kernel/validation.js';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { PageQuery } from '../../kernel/paging.js';
import { CODENAME_SHAPE } from './codename.js';
import type { StoreEntity } from './store.entity.js';

export class StoreInput {
  @ApiProperty({ example: 'Blue Harbor Books', maxLength: 100 })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ example: 'Blue Harbor Books Ltd.', maxLength: 200, description: 'Defaults to `name`.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullname?: string;

  @ApiPropertyOptional({ description: 'Image URL; a generated avatar when absent.' })
  @IsOptional()
  @IsImageUrl()
  @MaxLength(2048)
  avatar?: string;
}

// The store picker's page: by number, or (cheaper on a deep page: it reads no row before it) just
// after a store the client already has.
export class BriefStoresQuery extends PageQuery {
  @ApiPropertyOptional({
    description:
      'Codename of the last store of the previous page: the page starts just after it, and costs what the first page does however deep it is. Send the `pageNumber` you are asking for with it: the answer repeats it.',
    example: 'blue-harbor-books',
  })
  @IsOptional()
  @IsString()
  @Matches(CODENAME_SHAPE, { message: 'after must be a store codename' })
  after?: string;
}

export class BriefStoreResponse {
  @ApiProperty() name: string;
  @ApiProperty() codename: string;
  @ApiProperty() fullname: string;
  @ApiProperty() avatar: string;
  @ApiProperty() isActive: boolean;
}

export function toBriefStoreResponse(store: StoreEntity): BriefStoreResponse {
  return { name: store.name, codename: store.codename, fullname: store.fullname, avatar: store.avatar, isActive: store.isActive };
}

// A store as clients see it (OpenAPI); custom store properties appear beside these.
export class StoreResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() codename: string;
  @ApiProperty() fullname: string;
  @ApiProperty({ format: 'uri' }) avatar: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true }) ownerId: string | null;
  @ApiPropertyOptional({ description: 'Notification language after the user\'s own (BCP 47), once chosen.' }) language?: string;
  @ApiProperty({ type: 'integer' }) recordVersion: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

// What a store's administrators (and a SaaS administrator targeting it) may change about their
// store; `isActive` only a SaaS administrator. Absent means unchanged; null is refused except
// for `language` and `avatar`. The codename never changes: it is how requests name the store.
export class UpdateStoreInput {
  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'de', description: 'Notification language for users without their own (BCP 47); null clears it.' })
  @IsOptional()
  @IsLanguageTag()
  language?: string | null;

  @ApiPropertyOptional({ example: 'Blue Harbor Books', maxLength: 100, description: 'The store\'s name (trimmed); its codename stays.' })
  @IsOmittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;

  @ApiPropertyOptional({ example: 'Blue Harbor Books Ltd.', maxLength: 200, description: 'The store\'s full name (trimmed).' })
  @IsOmittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullname?: string;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Image URL (an uploaded avatar\'s link too); null goes back to a generated avatar.' })
  @ValidateIf((_o: object, value: unknown) => value !== undefined && value !== null)
  @IsImageUrl()
  @MaxLength(2048)
  avatar?: string | null;

  @ApiPropertyOptional({
    description:
      '`superAdmin` and `saasAdmin` only (`403 StoreActivationSaasOnly` for anyone else). false stops every login, session and API key of the store at once, on every replica; the root store is always active (`403 RootStoreAlwaysActive`).',
  })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;
}

// GET /v1/stores: every store, for the SaaS level.
export class StoreListQuery extends PageQuery {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 100,
    example: 'harbor',
    description: 'Only stores whose codename, name or full name contains this text, in any case (`%` and `_` are plain characters).',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  search?: string;
}

// One store of GET /v1/stores.
export class StoreListItem {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() codename: string;
  @ApiProperty() name: string;
  @ApiProperty() fullname: string;
  @ApiProperty({ format: 'uri' }) avatar: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'The store owner\'s user id; null for root.' }) ownerId: string | null;
}

export function toStoreListItem(store: StoreEntity) {
  return {
    id: store.id,
    codename: store.codename,
    name: store.name,
    fullname: store.fullname,
    avatar: store.avatar,
    isActive: store.isActive,
    createdAt: store.createdAt,
    ownerId: store.ownerId,
  };
}

export function toStoreResponse(store: StoreEntity) {
  return {
    id: store.id,
    name: store.name,
    codename: store.codename,
    fullname: store.fullname,
    avatar: store.avatar,
    isActive: store.isActive,
    ownerId: store.ownerId,
    ...(store.language && { language: store.language }),
    ...store.customData,
    recordVersion: store.recordVersion,
    createdAt: store.createdAt,
    updatedAt: store.updatedAt,
  };
}
