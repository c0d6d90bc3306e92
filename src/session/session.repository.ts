import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, LessThanOrEqual, MoreThan, Not, type EntityManager } from 'typeorm';
import type { PageRequest } from '../common/paging.js';
import { SessionEntity } from './session.entity.js';

// Tenant-level: store id first.
@Injectable()
export class SessionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(SessionEntity);
  }

  insert(storeId: string, session: Omit<SessionEntity, 'storeId'>): Promise<SessionEntity> {
    return this.repo().save({ ...session, storeId });
  }

  findById(storeId: string, id: string): Promise<SessionEntity | null> {
    return this.repo().findOneBy({ storeId, id });
  }

  // Live ones when `now` is given; all of them otherwise (to drop every cached copy).
  listForUser(storeId: string, userId: string, now?: Date): Promise<SessionEntity[]> {
    return this.repo().find({ where: { storeId, userId, ...(now && { expiresAt: MoreThan(now) }) }, order: { createdAt: 'DESC' } });
  }

  // One page of the user's live sessions, newest first, and how many there are.
  pageForUser(storeId: string, userId: string, now: Date, page: PageRequest): Promise<[SessionEntity[], number]> {
    return this.repo().findAndCount({ where: { storeId, userId, expiresAt: MoreThan(now) }, order: { createdAt: 'DESC', id: 'ASC' }, skip: page.offset, take: page.pageRowCount });
  }

  // The user's sessions after the newest `keep`: the ones a cap ends.
  async idsBeyond(storeId: string, userId: string, keep: number): Promise<string[]> {
    const rows = await this.repo().find({ select: { id: true }, where: { storeId, userId }, order: { createdAt: 'DESC', id: 'ASC' }, skip: keep });
    return rows.map((r) => r.id);
  }

  async clearFactor(storeId: string, id: string, flag: 'needsEmail2FA' | 'needsMobile2FA'): Promise<void> {
    await this.repo().update({ storeId, id }, { [flag]: false });
  }

  async deleteExpired(storeId: string, userId: string, now: Date): Promise<void> {
    await this.repo().delete({ storeId, userId, expiresAt: LessThanOrEqual(now) });
  }

  // Deletes and returns the ids deleted, so their cached copies can go too.
  async deleteWhere(storeId: string, where: { id?: string; ids?: string[]; userId?: string; exceptId?: string }, manager?: EntityManager): Promise<string[]> {
    const criteria = {
      storeId,
      ...(where.id && { id: where.id }),
      ...(where.ids && { id: In(where.ids) }),
      ...(where.userId && { userId: where.userId }),
      ...(where.exceptId && { id: Not(where.exceptId) }),
    };
    const rows = await this.repo(manager).find({ select: { id: true }, where: criteria });
    if (rows.length) await this.repo(manager).delete(rows.map((r) => r.id));
    return rows.map((r) => r.id);
  }
}
