import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageInfo } from '../../kernel/paging.js';
import { SessionResponse, type SessionEntity } from '../session/index.js';

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

// A login's answer: the session with its access token, and the bucket token.
export class LoginResponse extends SessionResponse {
  @ApiProperty({ required: true, description: 'The JWT to send as `Authorization: Bearer`.' }) override accessToken: string;
  @ApiPropertyOptional({ description: 'A token for the avatar bucket.' }) userBucketToken?: string;
}

export class LogoutResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty() message: string;
}

export class PublicKeyResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ format: 'uuid' }) keyId: string;
  @ApiProperty({ description: 'PEM (SPKI) public key.' }) keyData: string;
}

export class JsonWebKey {
  @ApiProperty({ enum: ['RSA'] }) kty: string;
  @ApiProperty() n: string;
  @ApiProperty() e: string;
  @ApiProperty({ format: 'uuid' }) kid: string;
  @ApiProperty({ enum: ['RS256'] }) alg: string;
  @ApiProperty({ enum: ['sig'] }) use: string;
}

export class JwksResponse {
  @ApiProperty({ type: [JsonWebKey] }) keys: JsonWebKey[];
}

export class SessionListItem {
  @ApiProperty({ format: 'uuid' }) sessionId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiProperty({ type: 'string', nullable: true }) ip: string | null;
  @ApiProperty({ type: 'string', nullable: true }) userAgent: string | null;
  @ApiProperty({ description: 'The session of this request.' }) current: boolean;
}

export class SessionListResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: [SessionListItem] }) sessions: SessionListItem[];
  @ApiProperty({ type: PageInfo }) paging: PageInfo;
}

export class SessionsEndedResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: 'integer', description: 'How many sessions ended.' }) ended: number;
}

export { SessionResponse, toSessionResponse, type SessionView } from '../session/index.js';

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
