import { Column, Entity, PrimaryColumn } from 'typeorm';

// A secret API key, stored only as its SHA-256 hash; the plaintext is shown once at creation.
@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  // The user who created it; the key acts for this user.
  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  // The first characters of the key, to recognise it in lists.
  @Column({ type: 'varchar', length: 24 })
  prefix: string;

  @Column({ type: 'char', length: 64 })
  keyHash: string;

  // Never more than the creator had when it was made.
  @Column({ type: 'text', array: true })
  roles: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  permissions: string[];

  @Column({ type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}
