import { Column, Entity, PrimaryColumn } from 'typeorm';

// One refresh token a session was given. Only its hash is kept. Once spent, the row holds its
// successor sealed under a key derived from the spent token itself (`successorSealed`), so a
// retry within the grace window gets the very pair the rotation produced, on any replica.
// `familyKey` (the same for every token of the session) derived successors before: a token spent
// that way has no sealed successor, and its retry derives it again.
@Entity('refresh_tokens')
export class RefreshTokenEntity {
  // Also the `jti` of the access token issued with it.
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'uuid' })
  sessionId: string;

  @Column({ type: 'varchar', length: 64 })
  tokenHash: string;

  @Column({ type: 'varchar', length: 64 })
  familyKey: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  // When it was exchanged for its successor; a later use is a reuse (past the grace window).
  @Column({ type: 'timestamptz', nullable: true })
  spentAt: Date | null;

  @Column({ type: 'uuid', nullable: true })
  successorId: string | null;

  @Column({ type: 'varchar', length: 128, nullable: true })
  successorSealed: string | null;
}
