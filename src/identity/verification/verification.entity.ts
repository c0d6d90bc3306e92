import { Column, Entity, PrimaryColumn } from 'typeorm';

// The live code of one flow for one subject (identifier as stored, or session id for a second
// factor). Only a hash of the code is kept.
@Entity('verification_codes')
export class VerificationCodeEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'varchar', length: 40 })
  purpose: string;

  @Column({ type: 'varchar', length: 254 })
  subject: string;

  // Null for an unknown or already verified identifier: its code can never work.
  @Column({ type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ type: 'uuid', nullable: true })
  sessionId: string | null;

  @Column({ type: 'char', length: 64 })
  codeHash: string;

  // The hash of a link sent with the code (passwordless sign-in), or null.
  @Column({ type: 'char', length: 64, nullable: true })
  linkHash: string | null;

  @Column({ type: 'int' })
  codeIndex: number;

  @Column({ type: 'int' })
  attempts: number;

  @Column({ type: 'timestamptz' })
  sentAt: Date;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  consumedAt: Date | null;
}
