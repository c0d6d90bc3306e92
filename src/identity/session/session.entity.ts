import { Column, Entity, PrimaryColumn } from 'typeorm';

// A login. The row is the truth (it survives restarts); caches only hold copies.
@Entity('sessions')
export class SessionEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  // Written at most once a minute per session (SessionService.touch); null until then.
  @Column({ type: 'timestamptz', nullable: true })
  lastSeenAt: Date | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  ip: string | null;

  @Column({ type: 'varchar', length: 512, nullable: true })
  userAgent: string | null;

  // The single sign-on provider's user id, when the session began there.
  @Column({ type: 'varchar', length: 255, nullable: true })
  ssoUserId: string | null;

  // Second factors still to complete: until then only a few routes answer.
  @Column({ type: 'boolean', default: false })
  needsEmail2FA: boolean;

  @Column({ type: 'boolean', default: false })
  needsMobile2FA: boolean;

  @Column({ type: 'boolean', default: false })
  needsTotp2FA: boolean;

  @Column({ type: 'boolean', default: false })
  needsPasskey2FA: boolean;

  // The methods the sign-in proved (kernel/assurance.ts), in the order proved.
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  amr: string[];

  // When its last factor was proved; null in sessions begun before this was kept.
  @Column({ type: 'timestamptz', nullable: true })
  authTime: Date | null;
}
