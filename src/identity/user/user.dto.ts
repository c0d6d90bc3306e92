import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsImageUrl } from '../../kernel/validation.js';
import { IsEmail, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import type { UserEntity } from './user.entity.js';

const trimLower = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value);
// Names are stored trimmed, so '   ' is empty and refused.
export const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

// What a person sends to become a user. Which identifiers and name fields are required depends
// on settings (identifier-rules.ts, userNameType) and is checked by UserService.
export class UserProfileInput {
  @ApiPropertyOptional({ example: 'ada@example.com', description: 'Required or accepted per `primaryLoginIdentifier` / `secondaryIdentifierPresence`.' })
  @IsOptional()
  @Transform(trimLower)
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ example: '+14155552671', description: 'Normalized to E.164.' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  mobile?: string;

  @ApiPropertyOptional({ minLength: 8, description: '8 characters to 72 bytes; not needed with a `socialCode`.' })
  // Required without a socialCode; a string whenever it is sent.
  @ValidateIf((o: { socialCode?: unknown; password?: unknown }) => o.socialCode === undefined || o.password !== undefined)
  @IsString()
  password: string;

  @ApiPropertyOptional({ example: 'Ada Lovelace', description: 'Required when `userNameType` is `asFullname`.' })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullname?: string;

  @ApiPropertyOptional({ description: 'Required when `userNameType` is `asNamePair`.' })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;

  @ApiPropertyOptional({ description: 'Required when `userNameType` is `asNamePair`.' })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  surname?: string;

  @ApiPropertyOptional({ description: 'Image URL; a generated avatar when absent.' })
  @IsOptional()
  @IsImageUrl()
  @MaxLength(2048)
  avatar?: string;
}

// Names custom user properties may not take.
export const SYSTEM_USER_FIELDS: ReadonlySet<string> = new Set([
  'id', 'email', 'password', 'passwordHash', 'fullname', 'name', 'surname', 'avatar', 'roleId', 'roles', 'mobile',
  'emailVerified', 'mobileVerified', 'storeId', 'isActive', 'recordVersion', 'createdAt', 'updatedAt', '_owner',
  'ownerId', 'customData', 'socialCode', 'store', '_store', 'sessionId', 'userId', 'tenantId', 'accessToken',
]);

export interface UserView {
  // Which optional fields this deployment's user model has.
  hasEmail: boolean;
  hasMobile: boolean;
  namePair: boolean;
  multipleRoles: boolean;
  // Number custom roles in their text form: given back as numbers.
  numberRoles?: ReadonlySet<string>;
}

const ROLE_ID = { oneOf: [{ type: 'string' }, { type: 'integer' }, { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'integer' }] } }], description: 'A role, or the list of roles when `usersHaveMultipleRoles` (a number custom role as its number).' };

// The user as clients see it (OpenAPI). Which identifier and name fields appear depends on the
// settings; custom user properties appear beside them.
export class UserResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiPropertyOptional({ type: 'string', nullable: true }) email?: string | null;
  @ApiPropertyOptional() emailVerified?: boolean;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'E.164.' }) mobile?: string | null;
  @ApiPropertyOptional() mobileVerified?: boolean;
  @ApiPropertyOptional({ type: 'string', nullable: true }) fullname?: string | null;
  @ApiPropertyOptional({ type: 'string', nullable: true }) name?: string | null;
  @ApiPropertyOptional({ type: 'string', nullable: true }) surname?: string | null;
  @ApiProperty({ format: 'uri' }) avatar: string;
  @ApiProperty(ROLE_ID) roleId: string | string[];
  @ApiProperty({ format: 'uuid' }) storeId: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: 'integer' }) recordVersion: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true }) _owner: string | null;
  @ApiPropertyOptional({ description: 'Preferred language of notifications (BCP 47), once chosen.' }) language?: string;
}

function roleOut(view: UserView, role: string): string | number {
  return view.numberRoles?.has(role) ? Number(role) : role;
}

// The user as clients see it: never the password hash.
export function toUserResponse(user: UserEntity, view: UserView): Record<string, unknown> {
  return {
    id: user.id,
    ...(view.hasEmail && { email: user.email, emailVerified: user.emailVerified }),
    ...(view.namePair ? { name: user.name, surname: user.surname } : { fullname: user.fullname }),
    avatar: user.avatar,
    roleId: view.multipleRoles ? user.roles.map((r) => roleOut(view, r)) : roleOut(view, user.roles[0]),
    ...(view.hasMobile && { mobile: user.mobile, mobileVerified: user.mobileVerified }),
    ...user.customData,
    storeId: user.storeId,
    isActive: user.isActive,
    recordVersion: user.recordVersion,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
    _owner: user.ownerId,
    // Only once chosen: the SPEC's user shape has no such field.
    ...(user.language && { language: user.language }),
  };
}
