import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, LessThanOrEqual, MoreThan, Not, type EntityManager } from 'typeorm';
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

  async deleteExpired(storeId: string, userId: string, now: Date): Promise<void> {
    await this.repo().delete({ storeId, userId, expiresAt: LessThanOrEqual(now) });
  }

  // Deletes and returns the ids deleted, so their cached copies can go too.
  async deleteWhere(storeId: string, where: { id?: string; userId?: string; exceptId?: string }, manager?: EntityManager): Promise<string[]> {
    const criteria = {
      storeId,
      ...(where.id && { id: where.id }),
      ...(where.userId && { userId: where.userId }),
      ...(where.exceptId && { id: Not(where.exceptId) }),
    };
    const rows = await this.repo(manager).find({ select: { id: true }, where: criteria });
    if (rows.length) await this.repo(manager).delete(rows.map((r) => r.id));
    return rows.map((r) => r.id);
  }
}
