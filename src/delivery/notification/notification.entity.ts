import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { ChannelName } from './notification.settings.js';

export type NotificationStatus = 'queued' | 'delivered' | 'failed';

export interface DeliveryAttempt {
  provider: string;
  outcome: 'delivered' | 'failed';
  // Provider's error text, never a credential.
  error?: string;
  permanent?: boolean;
  at: string;
}

// One message to one recipient. The queue job carries only the id; the worker reads the rest
// here. `secretVars` (codes, links) are erased once the notification is delivered or failed.
@Entity('notifications')
export class NotificationEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  // The recipient user, when the message is for one (always for inApp).
  @Column({ type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ type: 'varchar', length: 16 })
  channel: ChannelName;

  @Column({ type: 'varchar', length: 64 })
  template: string;

  // An address for the channel when not derived from the user.
  @Column({ type: 'varchar', length: 320, nullable: true })
  recipient: string | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  contextVars: Record<string, unknown>;

  @Column({ type: 'jsonb', nullable: true })
  secretVars: Record<string, unknown> | null;

  // The request's Accept-Language, third in the language order.
  @Column({ type: 'varchar', length: 200, nullable: true })
  acceptLanguage: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: NotificationStatus;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  attempts: DeliveryAttempt[];

  @Column({ type: 'varchar', length: 64, nullable: true })
  deliveredBy: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;

  // What was delivered, kept for inApp (the inbox shows it).
  @Column({ type: 'jsonb', nullable: true })
  content: { subject?: string; body: string; data?: Record<string, string> } | null;

  @Column({ type: 'timestamptz', nullable: true })
  readAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
