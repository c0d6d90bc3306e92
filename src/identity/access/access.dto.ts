import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, IsUrl, IsUUID, Matches, MaxLength, ValidateBy } from 'class-validator';
import { IsOmittable } from '../../kernel/validation.js';
import { PageQuery } from '../../kernel/paging.js';
import { PERMISSION_NAME } from './access.settings.js';
import type { PermissionGrantEntity, UserGroupEntity, UserGroupMemberEntity } from './access.entity.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class IdParam {
  @IsUUID()
  id: string;
}

export class PermissionNameParam {
  @Matches(PERMISSION_NAME, { message: 'name must be a permission name' })
  name: string;
}

// At most one subject; none grants to every user of the store (tenant-based).
export class CreateGrantInput {
  @ApiProperty({ description: 'A permission listed in settings `permissionGroups`.' })
  @Matches(PERMISSION_NAME, { message: 'permission must be a permission name' })
  permission: string;

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'integer' }], description: 'A role value (built-in or custom; a number custom role as its number).' })
  @IsOptional()
  @ValidateBy({
    name: 'isRoleValue',
    validator: {
      validate: (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 100) || (typeof v === 'number' && Number.isSafeInteger(v)),
      defaultMessage: () => 'roleId must be a role value',
    },
  })
  roleId?: string | number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUUID()
  userId?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUUID()
  groupId?: string;

  @ApiPropertyOptional({ description: 'One object the grant is an exception for.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  objectId?: string;

  @ApiProperty({ description: 'false denies (an exception to an allow).' })
  @IsBoolean()
  canDo: boolean;
}

export class CreateGroupInput {
  @ApiProperty()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  groupName: string;

  @ApiPropertyOptional({ description: 'Image URL; generated when absent.' })
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
  @MaxLength(2048)
  avatar?: string;
}

export class UpdateGroupInput {
  @ApiPropertyOptional() @IsOmittable() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(100) groupName?: string;

  @ApiPropertyOptional()
  @IsOmittable()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
  @MaxLength(2048)
  avatar?: string;
}

export class CreateMemberInput {
  @ApiProperty()
  @IsUUID()
  groupId: string;

  @ApiProperty()
  @IsUUID()
  userId: string;
}

// What PATCH may change on a membership: its group and its user; absent means unchanged.
export class UpdateMemberInput {
  @ApiPropertyOptional()
  @IsOmittable()
  @IsUUID()
  groupId?: string;

  @ApiPropertyOptional()
  @IsOmittable()
  @IsUUID()
  userId?: string;
}

export class MemberQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Only this group\'s members.' })
  @IsOptional()
  @IsUUID()
  groupId?: string;
}

// `roleValue` gives a stored role back as the settings declare it (a number custom role).
export function toGrantResponse(g: PermissionGrantEntity, roleValue: (text: string) => string | number = (r) => r) {
  return { id: g.id, storeId: g.storeId, permission: g.permission, roleId: g.roleId === null ? null : roleValue(g.roleId), userId: g.userId, groupId: g.groupId, objectId: g.objectId, canDo: g.canDo, ownerId: g.ownerId, createdAt: g.createdAt };
}

export function toGroupResponse(g: UserGroupEntity) {
  return { id: g.id, storeId: g.storeId, groupName: g.groupName, avatar: g.avatar, ownerId: g.ownerId, createdAt: g.createdAt };
}

export function toMemberResponse(m: UserGroupMemberEntity) {
  return { id: m.id, storeId: m.storeId, groupId: m.groupId, userId: m.userId, ownerId: m.ownerId, createdAt: m.createdAt };
}

export class PermissionException {
  @ApiProperty({ description: 'The object where the answer differs from `canDo`.' }) objectId: string;
  @ApiProperty() canDo: boolean;
}

export class PermissionDecision {
  @ApiProperty() permission: string;
  @ApiProperty() canDo: boolean;
  @ApiProperty({ type: [PermissionException] }) exceptions: PermissionException[];
}

export class EffectivePermissionsResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: [PermissionDecision], description: 'Every known permission.' }) permissions: PermissionDecision[];
}

export class PermissionDecisionResponse extends PermissionDecision {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
}

export class PermissionGrantResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'null: a SaaS-level grant, valid in every store.' }) storeId: string | null;
  @ApiProperty() permission: string;
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'integer' }], nullable: true, description: 'A number custom role as its number.' }) roleId: string | number | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true }) userId: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true }) groupId: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Set: an exception for this one object.' }) objectId: string | null;
  @ApiProperty({ description: 'false denies.' }) canDo: boolean;
  @ApiProperty({ format: 'uuid' }) ownerId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class UserGroupResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'null: a global group.' }) storeId: string | null;
  @ApiProperty() groupName: string;
  @ApiProperty({ description: 'Image URL.' }) avatar: string;
  @ApiProperty({ format: 'uuid' }) ownerId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class UserGroupMemberResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The member\'s store.' }) storeId: string;
  @ApiProperty({ format: 'uuid' }) groupId: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ format: 'uuid' }) ownerId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}
