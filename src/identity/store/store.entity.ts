import type { Tenant } from '../../kernel/tenant.js';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn, VersionColumn } from 'typeorm';

@Entity('stores')
export class StoreEntity implements Tenant {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  // Unique, url-safe, lower-case; `root` is the SaaS level.
  @Column({ type: 'varchar', length: 40 })
  codename: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 200 })
  fullname: string;

  @Column({ type: 'varchar', length: 2048 })
  avatar: string;

  @Column({ type: 'boolean', default: true })
  isActive: boolean;

  // The store owner's user id; null for root.
  @Column({ type: 'uuid', nullable: true })
  ownerId: string | null;

  // The store's notification language, after the user's own.
  @Column({ type: 'varchar', length: 35, nullable: true })
  language: string | null;

  // Custom tenant properties declared in settings.
  @Column({ type: 'jsonb', default: () => "'{}'" })
  customData: Record<string, unknown>;

  @VersionColumn({ default: 1 })
  recordVersion: number;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}

export { ROOT_CODENAME } from '../../kernel/tenant.js';
