import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsDate, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import type { ApiKeyEntity } from './api-key.entity.js';

export class CreateApiKeyInput {
  @ApiProperty({ example: 'reporting job', maxLength: 100 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ description: 'When the key stops working (ISO time, in the future). Never, when absent.' })
  @IsOptional()
  @Type(() => Date)
  @IsDate()
  expiresAt?: Date;

  @ApiPropertyOptional({ description: 'Roles the key acts with: yours, or lesser roles of your level (a tenantOwner may make a tenantUser key). Yours, when absent. Whatever its roles, a key\'s permissions never exceed what you hold at the time of use.' })
  @IsOptional()
  @IsString({ each: true })
  @ArrayMaxSize(20)
  roles?: string[];

  @ApiPropertyOptional({ description: 'Permissions the key acts with: a subset of what you hold now (400 PermissionUnknown / ApiKeyPermissionNotHeld otherwise); the key is then limited to them. All of yours, when absent or empty.' })
  @IsOptional()
  @IsString({ each: true })
  @ArrayMaxSize(50)
  permissions?: string[];
}

export class ApiKeyIdParam {
  @IsUUID()
  id: string;
}

export class ApiKeyResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The first characters of the key, to recognise it.' }) prefix: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ format: 'uuid' }) storeId: string;
  @ApiProperty({ type: [String] }) roles: string[];
  @ApiProperty({ type: [String] }) permissions: string[];
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) expiresAt: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) lastUsedAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class CreatedApiKeyResponse extends ApiKeyResponse {
  @ApiProperty({ description: 'The key itself: shown in this response only.' }) key: string;
}

export class ApiKeySession {
  @ApiProperty({ format: 'uuid', description: 'The key id.' }) sessionId: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ format: 'uuid' }) storeId: string;
  @ApiProperty({ type: [String] }) roles: string[];
  @ApiProperty({ type: 'string', nullable: true }) email: string | null;
  @ApiProperty({ type: 'string', nullable: true }) mobile: string | null;
  @ApiProperty({ type: 'string', nullable: true }) fullname: string | null;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiProperty({ enum: ['apiKey'] }) principal: 'apiKey';
  @ApiProperty({ type: [String], description: 'The permissions the key is limited to; empty: its creator\'s.' }) permissions: string[];
}

export class ValidateApiKeyResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: ApiKeySession }) session: ApiKeySession;
}

// The key record as clients see it: never the key or its hash.
export function toApiKeyResponse(key: ApiKeyEntity) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    userId: key.userId,
    storeId: key.storeId,
    roles: key.roles,
    permissions: key.permissions,
    expiresAt: key.expiresAt,
    lastUsedAt: key.lastUsedAt,
    createdAt: key.createdAt,
  };
}
