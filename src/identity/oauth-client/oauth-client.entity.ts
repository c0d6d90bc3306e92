import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type TokenEndpointAuthMethod = (typeof AUTH_METHODS)[number];

export const CLIENT_SCOPES = ['openid', 'offline_access', 'email', 'phone', 'profile', 'roles'] as const;
export type ClientScope = (typeof CLIENT_SCOPES)[number];

// A public JWK Set (RFC 7517), as a private_key_jwt client registered it.
export interface PublicJwks {
  keys: Record<string, string | string[]>[];
}

// A store's OAuth client of the OpenID Connect provider (migration 1766300000000).
// `secretHash`: the SHA-256 (hex) of the client secret, null for clients without one; the
// secret itself is never stored.
@Entity('oauth_client')
export class OAuthClientEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'varchar', length: 64 })
  clientId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'jsonb' })
  redirectUris: string[];

  @Column({ type: 'jsonb' })
  postLogoutRedirectUris: string[];

  @Column({ type: 'jsonb' })
  grantTypes: GrantType[];

  @Column({ type: 'varchar', length: 32 })
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;

  @Column({ type: 'jsonb', nullable: true })
  jwks: PublicJwks | null;

  @Column({ type: 'jsonb' })
  scopes: ClientScope[];

  // The service's own applications: the provider may skip the consent screen for them.
  @Column({ type: 'boolean', default: false })
  firstParty: boolean;

  @Column({ type: 'text', nullable: true })
  secretHash: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
