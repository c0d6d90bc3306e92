import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import type { SessionData } from '../session/session.types.js';
import type { SessionEntity } from '../session/session.entity.js';

export class LoginInput {
  @ApiPropertyOptional({ description: 'The primary identifier: email, E.164 mobile, or either for emailOrMobile.' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  username?: string;

  @ApiPropertyOptional({ description: 'Legacy alias of username; username wins when both are sent.' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  email?: string;

  @ApiProperty()
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string;
}

export class PublicKeyQuery {
  @ApiPropertyOptional({ description: 'An older key still valid for verification.' })
  @IsOptional()
  @IsUUID()
  keyId?: string;
}

export class SessionIdParam {
  @IsUUID()
  id: string;
}

export interface SessionView {
  multipleRoles: boolean;
}

// The spec's session object. `userBucketToken` is given at login only.
export function toSessionResponse(session: SessionData, view: SessionView, accessToken: string, userBucketToken?: string) {
  return {
    sessionId: session.sessionId,
    userId: session.userId,
    email: session.email,
    ...(session.mobile && { mobile: session.mobile }),
    fullname: session.fullname,
    roleId: view.multipleRoles ? session.roles : session.roles[0],
    tenantId: session.storeId,
    accessToken,
    ...(userBucketToken && { userBucketToken }),
  };
}

export function toSessionListItem(row: SessionEntity, currentId: string) {
  return {
    sessionId: row.id,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    ip: row.ip,
    userAgent: row.userAgent,
    current: row.id === currentId,
  };
}
