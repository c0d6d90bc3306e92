import { Column, Entity, PrimaryColumn } from 'typeorm';

// An RS256 key pair. It signs until `signUntil`, then verifies the tokens it signed until
// `verifyUntil` (signUntil + token lifetime), then it is dead.
@Entity('signing_keys')
export class SigningKeyEntity {
  // The JWT `kid`.
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'text' })
  publicKey: string;

  // PEM, or `enc:v1:...` when KEY_ENCRYPTION_SECRET is set.
  @Column({ type: 'text' })
  privateKey: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  signUntil: Date;

  @Column({ type: 'timestamptz' })
  verifyUntil: Date;
}
