import { Injectable } from '@nestjs/common';
import { DataSource, InjectDataSource, managerOf, type PageRequest, type Tx } from 'svc-auth/extension';
import { TicketEntity } from './ticket.entity.js';

// The store id first on every method: a ticket is only ever found in its own store.
@Injectable()
export class TicketRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private rows(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(TicketEntity);
  }

  async insert(storeId: string, ticket: Omit<TicketEntity, 'storeId' | 'createdAt' | 'closedAt'>, tx?: Tx): Promise<TicketEntity> {
    await this.rows(tx).insert({ ...ticket, storeId });
    return (await this.rows(tx).findOneByOrFail({ storeId, id: ticket.id }));
  }

  find(storeId: string, id: string, tx?: Tx): Promise<TicketEntity | null> {
    return this.rows(tx).findOneBy({ storeId, id });
  }

  countOpen(storeId: string, ownerId: string, tx?: Tx): Promise<number> {
    return this.rows(tx).countBy({ storeId, ownerId, status: 'open' });
  }

  // Newest first; `ownerId` narrows to one user's.
  list(storeId: string, ownerId: string | null, page: PageRequest): Promise<[TicketEntity[], number]> {
    return this.rows().findAndCount({ where: { storeId, ...(ownerId && { ownerId }) }, order: { createdAt: 'DESC', id: 'DESC' }, skip: page.offset, take: page.pageRowCount });
  }

  // Closes an open ticket; false when it was not open (a concurrent close won).
  async close(storeId: string, id: string, at: Date, tx: Tx): Promise<boolean> {
    const result = await this.rows(tx).update({ storeId, id, status: 'open' }, { status: 'closed', closedAt: at });
    return (result.affected ?? 0) === 1;
  }
}
