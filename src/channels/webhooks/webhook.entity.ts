import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

// A store's endpoint (migration 1766100000000). `secret` and `previousSecret` are sealed.
@Entity('webhook_endpoints')
export class WebhookEndpointEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'jsonb' })
  topics: string[];

  @Column({ type: 'varchar', length: 500, nullable: true })
  description: string | null;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  // Why the service disabled it (`gone`: it answered 410; `failing`: it failed for days).
  @Column({ type: 'varchar', length: 64, nullable: true })
  disabledReason: string | null;

  @Column({ type: 'text' })
  secret: string;

  @Column({ type: 'text', nullable: true })
  previousSecret: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  previousSecretUntil: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

// One event for one endpoint: `eventId` is the `webhook-id` of every attempt.
@Entity('webhook_deliveries')
export class WebhookDeliveryEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  endpointId: string;

  // The deployment that wrote it (SERVICE_CODENAME): its sweeps take its own deliveries only.
  @Column({ type: 'varchar', length: 31, default: '' })
  service: string;

  @Column({ type: 'varchar', length: 64 })
  eventId: string;

  @Column({ type: 'varchar', length: 200 })
  topic: string;

  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryStatus;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'integer', nullable: true })
  responseStatus: number | null;

  // The first kilobyte of the last answer.
  @Column({ type: 'text', nullable: true })
  responseBody: string | null;

  // Why the last attempt got no answer (timeout, refused address, connection error).
  @Column({ type: 'varchar', length: 300, nullable: true })
  error: string | null;

  @Column({ type: 'integer', nullable: true })
  durationMs: number | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastAttemptAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
