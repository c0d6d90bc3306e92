import { Column, Entity, PrimaryColumn } from 'typeorm';

// A user's authenticator app: one per user. Pending (`confirmedAt` null) from setup until a first
// code confirms it. The secret is sealed with KEY_ENCRYPTION_SECRET when set.
@Entity('totp_factors')
export class TotpFactorEntity {
  @PrimaryColumn({ type: 'uuid' })
  userId: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'text' })
  secret: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  confirmedAt: Date | null;

  // The time step (30 s) of the last code accepted: a code of this step or an earlier one is
  // refused, so a code works once, on any replica.
  @Column({ type: 'bigint' })
  lastUsedStep: string;
}

// One recovery code, hashed; using it deletes the row.
@Entity('recovery_codes')
export class RecoveryCodeEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar', length: 64 })
  codeHash: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}
