import { Column, Entity, PrimaryColumn } from 'typeorm';

// One audit entry (migrations 1765200000000, 1765800000000): append-only, chained per store by
// `seq`, `prevHash` and `hash`, keyed under `keyId` (docs/audit-log.md).
@Entity('audit_log')
export class AuditEntryEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  // The entry's place in its store's chain, from 1 (bigint: read as a string).
  @Column({ type: 'bigint' })
  seq: string;

  @Column({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'varchar', length: 100 })
  action: string;

  @Column({ type: 'varchar', length: 10 })
  outcome: 'success' | 'failure';

  @Column({ type: 'varchar', length: 100, nullable: true })
  reason: string | null;

  @Column({ type: 'varchar', length: 20 })
  actorType: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  actorId: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  actorRoleId: string | null;

  @Column({ type: 'varchar', length: 50, nullable: true })
  targetType: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  targetId: string | null;

  @Column({ type: 'varchar', length: 100, nullable: true })
  ip: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  userAgent: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  requestId: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  sessionId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  details: Record<string, unknown> | null;

  @Column({ type: 'char', length: 64, nullable: true })
  prevHash: string | null;

  @Column({ type: 'char', length: 64 })
  hash: string;

  // The chain key its hash is an HMAC under (audit-keys.ts); null: written before the chain was
  // keyed, a plain SHA-256.
  @Column({ type: 'varchar', length: 16, nullable: true })
  keyId: string | null;
}

// A store's chain head as it was at `signedAt` (migration 1765800000000): its entry `seq` had
// this hash. Signed with the service's RS256 signing key (`signature`, a JWS, also published on
// the broker for whoever keeps them) and MACed under the chain's key (`mac`, what the check
// trusts). Newer checkpoints show the newest entries removed.
@Entity('audit_checkpoint')
export class AuditCheckpointEntity {
  @PrimaryColumn({ type: 'uuid' })
  storeId: string;

  @PrimaryColumn({ type: 'bigint' })
  seq: string;

  @Column({ type: 'char', length: 64 })
  hash: string;

  // The entry's time: past the retention the entry may have gone, and the checkpoint with it.
  @Column({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'timestamptz' })
  signedAt: Date;

  @Column({ type: 'varchar', length: 16 })
  keyId: string;

  @Column({ type: 'char', length: 64 })
  mac: string;

  @Column({ type: 'text' })
  signature: string;
}
