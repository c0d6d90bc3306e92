import { Column, Entity, PrimaryColumn } from 'typeorm';

// What the OpenID Connect provider keeps between requests (sessions, interactions, grants,
// codes, tokens), one row per model and id, always inside one store (migration 1766400000000).
// Clients are not kept here: they are the store's OAuth clients.
@Entity('oidc_payload')
export class OidcPayloadEntity {
  @PrimaryColumn({ type: 'text' })
  model: string;

  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @Column({ type: 'text', nullable: true })
  grantId: string | null;

  @Column({ type: 'text', nullable: true })
  userCode: string | null;

  @Column({ type: 'text', nullable: true })
  uid: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  consumedAt: Date | null;
}
