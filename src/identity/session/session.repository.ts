import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, MoreThan, Not } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { SessionEntity } from './session.entity.js';

export type SessionFactorFlag = 'needsEmail2FA' | 'needsMobile2FA' | 'needsTotp2FA' | 'needsPasskey2FA';

// Tenant-level: store id first.
@Injectable()
export class SessionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(SessionEntity);
  }

  // A login's statements (this insert, deleteExpired, idsBeyond) are plain SQL: TypeORM's save
  // read the row by id before inserting it, and its query builder cost more CPU than the
  // statements themselves (bench:auth's login storm).
  // `askKnownDevice`: the answer also says whether another session of the user has the new one's
  // user agent, read by the same statement (whose reads do not see the row it inserts).
  async insert(
    storeId: string,
    session: Omit<SessionEntity, 'storeId' | 'lastSeenAt' | 'authTime'>,
    tx?: Tx,
    askKnownDevice = false,
  ): Promise<{ row: SessionEntity; knownDevice: boolean }> {
    const row = Object.assign(new SessionEntity(), session, { storeId, lastSeenAt: null, authTime: session.createdAt });
    const returned: { known: boolean }[] = await managerOf(this.dataSource, tx).query(
      `INSERT INTO "sessions" ("id", "storeId", "userId", "createdAt", "expiresAt", "ip", "userAgent", "ssoUserId", "needsEmail2FA", "needsMobile2FA", "needsTotp2FA", "needsPasskey2FA", "amr", "authTime")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $4)` +
        (askKnownDevice ? ' RETURNING EXISTS (SELECT 1 FROM "sessions" WHERE "storeId" = $2 AND "userId" = $3 AND "userAgent" = $7) AS "known"' : ''),
      [row.id, storeId, row.userId, row.createdAt, row.expiresAt, row.ip, row.userAgent, row.ssoUserId, row.needsEmail2FA, row.needsMobile2FA, row.needsTotp2FA, row.needsPasskey2FA, row.amr],
    );
    return { row, knownDevice: askKnownDevice && returned[0].known };
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

  // How many live sessions the store has (the console's overview): read from the store's rows of
  // the (storeId, userId) index.
  async countLive(storeId: string, now: Date): Promise<number> {
    const [{ n }]: { n: number }[] = await this.dataSource.query('SELECT count(*)::int AS "n" FROM "sessions" WHERE "storeId" = $1 AND "expiresAt" > $2', [storeId, now]);
    return n;
  }

  // The user's sessions after the newest `keep`: the ones a cap ends.
  async idsBeyond(storeId: string, userId: string, keep: number): Promise<string[]> {
    const rows: { id: string }[] = await this.dataSource.query(
      'SELECT "id" FROM "sessions" WHERE "storeId" = $1 AND "userId" = $2 ORDER BY "createdAt" DESC, "id" ASC OFFSET $3',
      [storeId, userId, keep],
    );
    return rows.map((r) => r.id);
  }

  // The session was used at `now`: written only when the stored time is older than `staleBefore`,
  // so replicas that each remember their own last write add no second write a minute.
  async touch(storeId: string, id: string, now: Date, staleBefore: Date): Promise<void> {
    await this.dataSource.query(
      'UPDATE "sessions" SET "lastSeenAt" = $3 WHERE "storeId" = $1 AND "id" = $2 AND ("lastSeenAt" IS NULL OR "lastSeenAt" < $4)',
      [storeId, id, now, staleBefore],
    );
  }

  // A factor proved: its pending flags cleared, its method added to `amr` (once; in the same
  // statement, so two factors proved at once both count) and the time of the sign-in's last
  // proof moved to `now`. Whether the session was there.
  async completeFactor(storeId: string, id: string, flags: readonly SessionFactorFlag[], method: string, now: Date, tx?: Tx): Promise<boolean> {
    const cleared = flags.map((f) => `"${f}" = false`).join(', ');
    const [, affected]: [unknown, number] = await managerOf(this.dataSource, tx).query(
      `UPDATE "sessions" SET ${cleared}, "amr" = CASE WHEN $3 = ANY("amr") THEN "amr" ELSE array_append("amr", $3) END, "authTime" = $4 WHERE "storeId" = $1 AND "id" = $2`,
      [storeId, id, method, now],
    );
    return affected > 0;
  }

  async deleteExpired(storeId: string, userId: string, now: Date): Promise<void> {
    await this.dataSource.query('DELETE FROM "sessions" WHERE "storeId" = $1 AND "userId" = $2 AND "expiresAt" <= $3', [storeId, userId, now]);
  }

  // Deletes and returns the sessions deleted (id and user), so their cached copies can go too
  // and their users be told.
  async deleteWhere(storeId: string, where: { id?: string; ids?: string[]; userId?: string; exceptId?: string }, tx?: Tx): Promise<{ id: string; userId: string }[]> {
    const criteria = {
      storeId,
      ...(where.id && { id: where.id }),
      ...(where.ids && { id: In(where.ids) }),
      ...(where.userId && { userId: where.userId }),
      ...(where.exceptId && { id: Not(where.exceptId) }),
    };
    const rows = await this.repo(tx).find({ select: { id: true, userId: true }, where: criteria });
    if (rows.length) await this.repo(tx).delete(rows.map((r) => r.id));
    return rows.map((r) => ({ id: r.id, userId: r.userId }));
  }
}
