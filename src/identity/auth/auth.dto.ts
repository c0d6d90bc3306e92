import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { SessionResponse } from '../session/index.js';

const ROLE_ID = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description: 'A role, or the list of roles when `usersHaveMultipleRoles`.' };

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

export class LogoutInput {
  @ApiPropertyOptional({ description: 'With refresh tokens on: ends the session of this refresh token when no valid access token is sent.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  refreshToken?: string;
}

// A login's answer: the session with its access token, and the bucket token.
export class LoginResponse extends SessionResponse {
  @ApiProperty({ required: true, description: 'The JWT to send as `Authorization: Bearer`.' }) override accessToken: string;
  @ApiPropertyOptional({ description: 'A token for the avatar bucket.' }) userBucketToken?: string;
  @ApiPropertyOptional({ description: 'With `accessTokenMinutes` set: the opaque token that gets the next pair at `POST /auth-api/refresh` (single use).' }) refreshToken?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'With `accessTokenMinutes` set: when the access token expires.' }) accessTokenExpiresAt?: string;
  @ApiPropertyOptional({ enum: [true], description: 'Present on a password login whose password is shorter or weaker than the password policy now asks (`GET /auth-api/password-policy`): the client may suggest a change.' }) passwordChangeRecommended?: true;
}

export class RefreshInput {
  // No length rule here: any string that cannot refresh gets the one answer, 401
  // RefreshTokenInvalid (the body parser bounds its size).
  @ApiPropertyOptional({ description: 'The refresh token; without it, the refresh cookie of the targeted store is used. Any string that cannot refresh answers 401 `RefreshTokenInvalid`.' })
  @IsOptional()
  @IsString()
  refreshToken?: string;
}

// A refresh's answer: the session with the new pair.
export class RefreshResponse extends SessionResponse {
  @ApiProperty({ required: true }) override accessToken: string;
  @ApiProperty({ description: 'The next refresh token; the one sent is now spent.' }) refreshToken: string;
  @ApiProperty({ format: 'date-time' }) accessTokenExpiresAt: string;
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

export class IntrospectInput {
  @ApiProperty({ description: 'An access token, API key or refresh token.' })
  @IsString()
  @MaxLength(4096)
  token: string;

  @ApiPropertyOptional({ enum: ['access_token', 'refresh_token', 'api_key'], description: 'Which kind to try first.' })
  @IsOptional()
  @IsIn(['access_token', 'refresh_token', 'api_key'])
  token_type_hint?: 'access_token' | 'refresh_token' | 'api_key';
}

export class IntrospectionResponse {
  @ApiProperty() active: boolean;
  @ApiPropertyOptional({ format: 'uuid', description: 'The user.' }) sub?: string;
  @ApiPropertyOptional({ format: 'uuid', description: 'The session (an API key: the key).' }) sid?: string;
  @ApiPropertyOptional({ format: 'uuid' }) storeId?: string;
  @ApiPropertyOptional() storeCodename?: string;
  @ApiPropertyOptional(ROLE_ID) roleId?: string | string[];
  @ApiPropertyOptional({ type: 'integer', description: 'Seconds since the epoch.' }) exp?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Seconds since the epoch.' }) iat?: number;
  @ApiPropertyOptional({ enum: ['access_token', 'refresh_token', 'api_key'] }) token_type?: string;
  @ApiPropertyOptional({ enum: ['aal1', 'aal2'], description: 'Of a sign-in (not an API key): `aal2` when two methods were proved, `aal1` for one. A token of an unfinished sign-in is never active.' }) acr?: string;
  @ApiPropertyOptional({ type: [String], example: ['pwd', 'otp', 'mfa'], description: 'The methods the sign-in proved (RFC 8176: `pwd`, `otp`, `hwk`, `swk`, `sms`, `mfa`; and `email`, `fed`).' }) amr?: string[];
  @ApiPropertyOptional({ type: 'integer', description: 'When the sign-in\'s last factor was proved, seconds since the epoch.' }) auth_time?: number;
}

export class OpenIdConfiguration {
  @ApiProperty() issuer: string;
  @ApiProperty() jwks_uri: string;
  @ApiProperty() introspection_endpoint: string;
  @ApiProperty({ type: [String] }) id_token_signing_alg_values_supported: string[];
  @ApiProperty({ type: [String] }) subject_types_supported: string[];
  @ApiProperty({ type: [String] }) response_types_supported: string[];
  @ApiProperty({ type: [String] }) claims_supported: string[];
  @ApiProperty({ type: [String], description: '`acr` of access tokens: `aal2` two methods proved, `aal1` one, `pending` an unfinished sign-in (such a token has no `aud` and serves only to finish it).' }) acr_values_supported: string[];
}
