import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { AUTH_METHODS, CLIENT_SCOPES, GRANT_TYPES, type ClientScope, type GrantType, type OAuthClientEntity, type PublicJwks, type TokenEndpointAuthMethod } from './oauth-client.entity.js';
import { MAX_URIS } from './oauth-client.rules.js';

const REDIRECT_URIS = `Absolute, without a fragment: \`https\`, \`http\` on a loopback host (127.0.0.1, [::1], localhost) only, or, for a client with \`tokenEndpointAuthMethod: "none"\` (a native app), a private-use scheme in reverse-domain form (\`com.example.app:/callback\`, RFC 8252). At most ${MAX_URIS}.`;

export class CreateOAuthClientInput {
  @ApiProperty({ example: 'Storefront', maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiProperty({ type: [String], example: ['https://app.example.com/callback'], description: `${REDIRECT_URIS} At least one with \`authorization_code\`.` })
  @IsArray()
  @IsString({ each: true })
  @MaxLength(2048, { each: true })
  @ArrayMaxSize(MAX_URIS)
  redirectUris: string[];

  @ApiPropertyOptional({ type: [String], default: [], description: `Where the provider may send the browser after a sign-out. ${REDIRECT_URIS}` })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @MaxLength(2048, { each: true })
  @ArrayMaxSize(MAX_URIS)
  postLogoutRedirectUris?: string[];

  @ApiPropertyOptional({ enum: GRANT_TYPES, isArray: true, default: ['authorization_code'], description: '`refresh_token` needs `authorization_code`; `client_credentials` needs a confidential client.' })
  @IsOptional()
  @IsArray()
  @IsIn(GRANT_TYPES, { each: true })
  @ArrayMinSize(1)
  @ArrayUnique()
  grantTypes?: GrantType[];

  @ApiPropertyOptional({ enum: AUTH_METHODS, default: 'client_secret_basic', description: '`none`: a public client (a browser or native app, with PKCE); `client_secret_basic` / `client_secret_post`: a secret the service issues, in this answer only; `private_key_jwt`: a signed assertion, verified with `jwks`. It cannot be changed later.' })
  @IsOptional()
  @IsIn(AUTH_METHODS)
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { keys: [{ kty: 'EC', crv: 'P-256', x: '…', y: '…', kid: 'k1' }] }, description: 'The client\'s public keys (a JWK Set), required with `private_key_jwt` and only then; private members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `k`) are refused.' })
  @IsOptional()
  @IsObject()
  jwks?: PublicJwks;

  @ApiPropertyOptional({ enum: CLIENT_SCOPES, isArray: true, default: ['openid'] })
  @IsOptional()
  @IsArray()
  @IsIn(CLIENT_SCOPES, { each: true })
  @ArrayMinSize(1)
  @ArrayUnique()
  scopes?: ClientScope[];

  @ApiPropertyOptional({ default: false, description: 'One of the service\'s own applications: the provider may skip the consent screen for it.' })
  @IsOptional()
  @IsBoolean()
  firstParty?: boolean;
}

// What may change; the authentication method (and so the secret's existence) may not.
export class UpdateOAuthClientInput {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ type: [String], description: REDIRECT_URIS })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @MaxLength(2048, { each: true })
  @ArrayMaxSize(MAX_URIS)
  redirectUris?: string[];

  @ApiPropertyOptional({ type: [String], description: REDIRECT_URIS })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @MaxLength(2048, { each: true })
  @ArrayMaxSize(MAX_URIS)
  postLogoutRedirectUris?: string[];

  @ApiPropertyOptional({ enum: GRANT_TYPES, isArray: true })
  @IsOptional()
  @IsArray()
  @IsIn(GRANT_TYPES, { each: true })
  @ArrayMinSize(1)
  @ArrayUnique()
  grantTypes?: GrantType[];

  @ApiPropertyOptional({ enum: CLIENT_SCOPES, isArray: true })
  @IsOptional()
  @IsArray()
  @IsIn(CLIENT_SCOPES, { each: true })
  @ArrayMinSize(1)
  @ArrayUnique()
  scopes?: ClientScope[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  firstParty?: boolean;
}

export class OAuthClientIdParam {
  @IsUUID()
  id: string;
}

export class OAuthClientResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'oc_3q2-7wZ8h1Xk0b9m2VhK4A', description: 'The OAuth `client_id`.' }) clientId: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) redirectUris: string[];
  @ApiProperty({ type: [String] }) postLogoutRedirectUris: string[];
  @ApiProperty({ enum: GRANT_TYPES, isArray: true }) grantTypes: GrantType[];
  @ApiProperty({ enum: AUTH_METHODS }) tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  @ApiProperty({ enum: CLIENT_SCOPES, isArray: true }) scopes: ClientScope[];
  @ApiProperty() firstParty: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class OAuthClientWithSecretResponse extends OAuthClientResponse {
  @ApiPropertyOptional({ description: 'The client secret (base64url of 32 random bytes), for `client_secret_basic` and `client_secret_post` clients only, shown in this answer only: the service keeps its hash.' })
  clientSecret?: string;
}

// Never the secret's hash, nor the JWK Set.
export function toOAuthClientResponse(row: OAuthClientEntity): OAuthClientResponse {
  return {
    id: row.id,
    clientId: row.clientId,
    name: row.name,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    grantTypes: row.grantTypes,
    tokenEndpointAuthMethod: row.tokenEndpointAuthMethod,
    scopes: row.scopes,
    firstParty: row.firstParty,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
