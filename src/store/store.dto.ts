import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsOptional, IsString, IsUrl, MaxLength } from 'class-validator';
import type { StoreEntity } from './store.entity.js';

export const URL_OPTIONS = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };

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
  @IsUrl(URL_OPTIONS)
  @MaxLength(2048)
  avatar?: string;
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

export function toStoreResponse(store: StoreEntity) {
  return {
    id: store.id,
    name: store.name,
    codename: store.codename,
    fullname: store.fullname,
    avatar: store.avatar,
    isActive: store.isActive,
    ownerId: store.ownerId,
    ...store.customData,
    recordVersion: store.recordVersion,
    createdAt: store.createdAt,
    updatedAt: store.updatedAt,
  };
}
