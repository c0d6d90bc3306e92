import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { SessionResponse } from '../session/index.js';

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

export { SessionResponse, toSessionResponse, type SessionView } from '../session/index.js';
