import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { NotificationEntity, type DeliveryAttempt } from './notification.entity.js';

@Injectable()
export class NotificationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(NotificationEntity);
  }

  // Whether the row was written: a notification whose id is there already is left as it is.
  async insert(storeId: string, row: Omit<NotificationEntity, 'storeId' | 'createdAt' | 'updatedAt'>, tx?: Tx): Promise<boolean> {
    const result = await managerOf(this.dataSource, tx)
      .createQueryBuilder()
      .insert()
      .into(NotificationEntity)
      .values({ ...row, storeId } as never)
      .orIgnore()
      .returning(['id'])
      .execute();
    return (result.raw as unknown[]).length > 0;
  }

  // The worker's read: a job names only the notification, whose row names its store.
  findForDelivery(id: string): Promise<NotificationEntity | null> {
    return this.repo.findOneBy({ id });
  }

  // Rows still queued that were created before `before`: their jobs may have been lost.
  queuedIds(before: Date, limit: number): Promise<string[]> {
    return this.repo
      .find({ select: { id: true }, where: { status: 'queued', createdAt: LessThan(before) }, order: { createdAt: 'ASC' }, take: limit })
      .then((rows) => rows.map((r) => r.id));
  }

  // Records the delivery, erasing secrets, in one statement; only a queued row changes, so a
  // repeated job cannot record (or send) twice.
  async markDelivered(storeId: string, id: string, provider: string, attempts: DeliveryAttempt[], content: NotificationEntity['content']): Promise<boolean> {
    const result = await this.repo
      .createQueryBuilder()
      .update()
      .set({
        status: 'delivered',
        deliveredBy: provider,
        deliveredAt: () => 'now()',
        secretVars: null,
        content: content as never,
        attempts: () => `"attempts" || :attempts::jsonb`,
      })
      .where('"storeId" = :storeId AND id = :id AND status = :queued', { storeId, id, queued: 'queued' })
      .setParameter('attempts', JSON.stringify(attempts))
      .execute();
    return (result.affected ?? 0) > 0;
  }

  async recordAttempts(storeId: string, id: string, attempts: DeliveryAttempt[], final: boolean): Promise<void> {
    await this.repo
      .createQueryBuilder()
      .update()
      .set({ attempts: () => `"attempts" || :attempts::jsonb`, ...(final && { status: 'failed' as const, secretVars: null }) })
      .where('"storeId" = :storeId AND id = :id AND status = :queued', { storeId, id, queued: 'queued' })
      .setParameter('attempts', JSON.stringify(attempts))
      .execute();
  }

  // The inbox: a user's delivered in-app notifications, newest first.
  inbox(storeId: string, userId: string, page: PageRequest, unreadOnly: boolean): Promise<[NotificationEntity[], number]> {
    return this.repo.findAndCount({
      where: { storeId, userId, channel: 'inApp', status: 'delivered', ...(unreadOnly && { readAt: IsNull() }) },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.pageRowCount,
    });
  }

  findInboxItem(storeId: string, userId: string, id: string): Promise<NotificationEntity | null> {
    return this.repo.findOneBy({ storeId, userId, id, channel: 'inApp', status: 'delivered' });
  }

  // Only an inbox item (as findInboxItem): an email's id, known from its Message-ID, is not one.
  async markRead(storeId: string, userId: string, id: string): Promise<void> {
    await this.repo.update({ storeId, userId, id, channel: 'inApp', status: 'delivered', readAt: IsNull() }, { readAt: () => 'now()' });
  }
}
