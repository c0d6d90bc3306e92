import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn, VersionColumn } from 'typeorm';

@Entity('users')
export class UserEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  // Stored lower-cased; unique per store.
  @Column({ type: 'varchar', length: 254, nullable: true })
  email: string | null;

  // E.164; unique per store.
  @Column({ type: 'varchar', length: 16, nullable: true })
  mobile: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  fullname: string | null;

  @Column({ type: 'varchar', length: 100, nullable: true })
  name: string | null;

  @Column({ type: 'varchar', length: 100, nullable: true })
  surname: string | null;

  // bcrypt hash; never leaves the user module.
  @Column({ type: 'varchar', length: 100 })
  passwordHash: string;

  @Column({ type: 'varchar', length: 2048 })
  avatar: string;

  // One entry unless `usersHaveMultipleRoles`.
  @Column({ type: 'text', array: true })
  roles: string[];

  @Column({ type: 'boolean', default: false })
  emailVerified: boolean;

  @Column({ type: 'boolean', default: false })
  mobileVerified: boolean;

  @Column({ type: 'boolean', default: true })
  isActive: boolean;

  // The app factors the user holds (kept by the mfa and passkey features): a password login
  // then asks for TOTP, and `mfaRequiredForRoles` is satisfied by either.
  @Column({ type: 'boolean', default: false })
  totpEnabled: boolean;

  @Column({ type: 'boolean', default: false })
  hasPasskey: boolean;

  // `_owner` in responses: who created the record (the user itself on self-registration).
  @Column({ type: 'uuid', nullable: true })
  ownerId: string | null;

  // Preferred language for notifications (BCP 47), first in the language order.
  @Column({ type: 'varchar', length: 35, nullable: true })
  language: string | null;

  // Custom user properties declared in settings.
  @Column({ type: 'jsonb', default: () => "'{}'" })
  customData: Record<string, unknown>;

  @VersionColumn({ default: 1 })
  recordVersion: number;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
