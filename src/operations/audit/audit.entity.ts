import { Column, Entity, PrimaryColumn } from 'typeorm';

// One audit entry (migration 1765200000000): append-only, chained per store by `seq`,
// `prevHash` and `hash` (docs/audit-log.md).
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
}
