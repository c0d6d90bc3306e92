import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan } from 'typeorm';
import type { StoredDomainEvent } from '../../kernel/domain-events.js';
import type { PageRequest } from '../../kernel/paging.js';
import { DatabasePool } from '../../platform/database/database-pool.js';
import { Outbox } from '../../platform/database/outbox.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { SessionEntity } from './session.entity.js';

export type SessionFactorFlag = 'needsEmail2FA' | 'needsMobile2FA' | 'needsTotp2FA' | 'needsPasskey2FA';

// Tenant-level: store id first.
@Injectable()
export class SessionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly pool: DatabasePool,
    private readonly outbox: Outbox,
  ) {}

  private repo(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(SessionEntity);
  }

  // A login's one statement: the user's expired sessions deleted, the new one inserted, and what
  // the login needs to know after it read in the same round trip: the ids of the user's live
  // sessions beyond the newest `keep` (the cap ends them), and, when asked (`askKnownDevice`),
  // whether another live session has the new one's user agent. Its reads run on the statement's
  // snapshot, which holds neither the new row nor the deletions: they skip expired rows, and count
  // the new row in (`keep - 1` older ones stay). Plain SQL: TypeORM's save read the row by id
  // before inserting it, and its query builder cost more CPU than the statements themselves
  // (bench:auth's login storm). Outside a transaction it is a named statement (DatabasePool).
  async insert(
    storeId: string,
    session: Omit<SessionEntity, 'storeId' | 'lastSeenAt' | 'authTime'>,
    opts: { keep: number; askKnownDevice?: boolean; tx?: Tx },
  ): Promise<{ row: SessionEntity; knownDevice: boolean; beyond: string[] }> {
    const row = Object.assign(new SessionEntity(), session, { storeId, lastSeenAt: null, authTime: session.createdAt });
    const known = opts.askKnownDevice
      ? 'EXISTS (SELECT 1 FROM "sessions" WHERE "storeId" = $2 AND "userId" = $3 AND "expiresAt" > $4 AND "userAgent" = $7)'
      : 'false';
    const text = `WITH "expired" AS (DELETE FROM "sessions" WHERE "storeId" = $2 AND "userId" = $3 AND "expiresAt" <= $4),
      "inserted" AS (
        INSERT INTO "sessions" ("id", "storeId", "userId", "createdAt", "expiresAt", "ip", "userAgent", "ssoUserId", "needsEmail2FA", "needsMobile2FA", "needsTotp2FA", "needsPasskey2FA", "amr", "authTime")
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $4)
      )
      SELECT ${known} AS "known", ARRAY(
        SELECT "id" FROM "sessions" WHERE "storeId" = $2 AND "userId" = $3 AND "expiresAt" > $4 ORDER BY "createdAt" DESC, "id" ASC OFFSET $14
      ) AS "beyond"`;
    const values = [row.id, storeId, row.userId, row.createdAt, row.expiresAt, row.ip, row.userAgent, row.ssoUserId, row.needsEmail2FA, row.needsMobile2FA, row.needsTotp2FA, row.needsPasskey2FA, row.amr, Math.max(opts.keep - 1, 0)];
    const [answer]: { known: boolean; beyond: string[] }[] = opts.tx
      ? await managerOf(this.dataSource, opts.tx).query(text, values)
      : await this.pool.query(opts.askKnownDevice ? 'session-insert-known' : 'session-insert', text, values);
    return { row, knownDevice: answer.known, beyond: answer.beyond };
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

  // Deletes the sessions and writes their `session.ended` events (one per user, ids only) in
  // one statement: the sessions deleted (id and user), so their cached copies can go too, and
  // the events, for DomainEvents to deliver once the statement (or `tx`) has committed.
  async deleteWhere(storeId: string, where: { id?: string; ids?: string[]; userId?: string; exceptId?: string }, tx?: Tx): Promise<{ sessions: { id: string; userId: string }[]; events: StoredDomainEvent[] }> {
    const values: unknown[] = [storeId];
    const criteria = ['"storeId" = $1'];
    const param = (value: unknown, cast: string) => `$${values.push(value)}::${cast}`;
    if (where.id) criteria.push(`"id" = ${param(where.id, 'uuid')}`);
    if (where.ids) criteria.push(`"id" = ANY(${param(where.ids, 'uuid[]')})`);
    if (where.userId) criteria.push(`"userId" = ${param(where.userId, 'uuid')}`);
    if (where.exceptId) criteria.push(`"id" <> ${param(where.exceptId, 'uuid')}`);
    const [row] = (await managerOf(this.dataSource, tx).query(
      `WITH "gone" AS (DELETE FROM "sessions" WHERE ${criteria.join(' AND ')} RETURNING "id", "userId"),
        "events" AS (${this.outbox.insertFrom(`SELECT gen_random_uuid(), $1::uuid, 'session.ended', jsonb_build_object('storeId', $1::text, 'userId', "userId"::text, 'sessionIds', jsonb_agg("id"::text ORDER BY "id"))
          FROM "gone" GROUP BY "userId"`)})
      SELECT (SELECT coalesce(jsonb_agg(jsonb_build_object('id', "id", 'userId', "userId")), '[]'::jsonb) FROM "gone") AS "sessions",
        (SELECT coalesce(jsonb_agg(to_jsonb("events")), '[]'::jsonb) FROM "events") AS "events"`,
      values,
    )) as { sessions: { id: string; userId: string }[]; events: StoredDomainEvent[] }[];
    return row;
  }
}
