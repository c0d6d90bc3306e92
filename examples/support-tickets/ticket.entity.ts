import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'svc-auth/extension';

// A store's ticket. Tenant-level: every row carries its store, and every query names it.
@Entity('support_ticket')
@Index(['storeId', 'ownerId', 'status'])
export class TicketEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid')
  storeId: string;

  // The user who opened it.
  @Column('uuid')
  ownerId: string;

  @Column('varchar', { length: 200 })
  subject: string;

  @Column('varchar', { length: 10 })
  status: 'open' | 'closed';

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { nullable: true })
  closedAt: Date | null;
}
