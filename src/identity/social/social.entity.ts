import { Column, Entity, PrimaryColumn } from 'typeorm';

// A user's account at a provider, linked by the provider's own user id (never by an email).
@Entity('social_identities')
export class SocialIdentityEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  userId: string;

  // A social provider (`google`...) or `sso`.
  @Column({ type: 'varchar', length: 32 })
  provider: string;

  @Column({ type: 'varchar', length: 255 })
  providerUserId: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}

// A single-use value of a sign-in in progress: the `state` of a redirect to a provider, or a
// `socialCode` handed to the client. Only its SHA-256 is stored, so a database read reveals none.
@Entity('social_codes')
export class SocialCodeEntity {
  @PrimaryColumn({ type: 'char', length: 64 })
  codeHash: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'varchar', length: 16 })
  kind: 'state' | 'code';

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;
}
