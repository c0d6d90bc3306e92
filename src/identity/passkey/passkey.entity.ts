import { Column, Entity, PrimaryColumn } from 'typeorm';

// WebAuthn counters are unsigned 32-bit: bigint in the table, a number here.
const counterColumn = { to: (v: number) => v, from: (v: string | number) => Number(v) };

// A passkey (WebAuthn credential) of one user in one store. The public key verifies its
// signatures; nothing secret is stored.
@Entity('passkeys')
export class PasskeyEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  userId: string;

  // The authenticator's credential id, base64url; unique across stores.
  @Column({ type: 'varchar', length: 1400 })
  credentialId: string;

  // The COSE public key as the authenticator gave it.
  @Column({ type: 'bytea' })
  publicKey: Buffer;

  @Column({ type: 'bigint', transformer: counterColumn })
  counter: number;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  transports: string[];

  // Synced by its provider (iCloud Keychain, Google Password Manager...).
  @Column({ type: 'boolean' })
  backedUp: boolean;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}

// `2fa`: a pending sign-in's passkey factor (bound to its user, as a registration's is).
export type ChallengePurpose = 'register' | 'login' | '2fa';

// A ceremony's challenge, kept server-side so any replica can finish it; deleted when used.
@Entity('passkey_challenges')
export class PasskeyChallengeEntity {
  @PrimaryColumn({ type: 'varchar', length: 100 })
  challenge: string;

  @Column({ type: 'uuid' })
  storeId: string;

  // Registration and second factors: the user the ceremony is for.
  @Column({ type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ type: 'varchar', length: 10 })
  purpose: ChallengePurpose;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;
}
