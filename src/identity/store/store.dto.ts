import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsImageUrl, IsLanguageTag } from '../../kernel/validation.js';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
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

// What a store's administrators may change about their store.
export class UpdateStoreInput {
  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'de', description: 'Notification language for users without their own (BCP 47); null clears it.' })
  @IsOptional()
  @IsLanguageTag()
  language?: string | null;
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
