import { ApiProperty } from '@nestjs/swagger';
import { IsUUID, Matches } from 'class-validator';
import type { StoredGrant } from './oidc-payload.repository.js';

// The provider's grant ids (nanoid: url-safe characters).
const GRANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class OAuthConsentIdParam {
  @ApiProperty({ description: 'The consent\'s id (the grant id).' })
  @Matches(GRANT_ID, { message: 'id must be a consent id' })
  id: string;
}

export class OAuthConsentUserParam {
  @ApiProperty({ format: 'uuid', description: 'The user\'s id.' })
  @IsUUID()
  id: string;
}

export class UserOAuthConsentParams {
  @ApiProperty({ format: 'uuid', description: 'The user\'s id.' })
  @IsUUID()
  id: string;

  @ApiProperty({ description: 'The consent\'s id (the grant id).' })
  @Matches(GRANT_ID, { message: 'consentId must be a consent id' })
  consentId: string;
}

export class OAuthConsentResponse {
  @ApiProperty({ example: 'p0ZJ2gRbbm2b9QPtXgJ8R', description: 'The grant id.' }) id: string;
  @ApiProperty({ example: 'oc_3q2-7wZ8h1Xk0b9m2VhK4A', description: 'The OAuth `client_id` of the application.' }) clientId: string;
  @ApiProperty({ type: String, nullable: true, description: 'The application\'s name; null once the client is deleted.' }) clientName: string | null;
  @ApiProperty({ type: [String], example: ['openid', 'email', 'offline_access'], description: 'The scopes the user allowed.' }) scopes: string[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class OAuthConsentDeletedResponse {
  @ApiProperty({ description: 'The revoked consent\'s id (the grant id).' }) id: string;
}

// `names`: the store's clients' names by client_id.
export function toOAuthConsentResponse(grant: StoredGrant, names: ReadonlyMap<string, string>): OAuthConsentResponse {
  const clientId = typeof grant.payload.clientId === 'string' ? grant.payload.clientId : '';
  const iat = typeof grant.payload.iat === 'number' ? grant.payload.iat : 0;
  return {
    id: grant.id,
    clientId,
    clientName: names.get(clientId) ?? null,
    scopes: grantScopes(grant),
    createdAt: new Date(iat * 1000).toISOString(),
  };
}

export function grantScopes(grant: StoredGrant): string[] {
  const scope = grant.payload.openid?.scope;
  return typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [];
}
