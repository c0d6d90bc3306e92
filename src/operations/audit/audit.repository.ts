import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { chainHash } from './audit-chain.js';
import { AuditEntryEntity } from './audit.entity.js';

export type NewAuditEntry = Omit<AuditEntryEntity, 'storeId' | 'seq' | 'prevHash' | 'hash'>;

export interface AuditFilter {
  action?: string;
  outcome?: string;
  actorId?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
  ip?: string;
}

// Keyset position: entries strictly older than this one (newest first).
export interface AuditPosition {
  at: Date;
  id: string;
}

// How many entries of each action per hour or day: one row per period and action that has any.
export interface PeriodCount {
  from: Date;
  action: string;
  count: number;
}

// The store's entries of some actions counted per period (UTC), grouped by PostgreSQL: the rows
// come from a range of the (storeId, action varchar_pattern_ops, at) index, one range per action,
// and only the counts leave the database. $1 store, $2 actions, $3 from (inclusive), $4 to
// (exclusive), $5 'hour' or 'day'. Exported for the test that reads its plan.
export const COUNT_PER_PERIOD_SQL = `SELECT date_trunc($5::text, "at", 'UTC') AS "from", "action", count(*)::int AS "count"
  FROM "audit_log"
  WHERE "storeId" = $1 AND "action" = ANY($2::varchar[]) AND "at" >= $3 AND "at" < $4
  GROUP BY 1, 2`;

// Namespace of the per-store advisory locks (two-key form, apart from the one-key locks of
// the seed and the signing keys).
const CHAIN_LOCK_SPACE = 0x4155_4454; // "AUDT"

// Tenant-level: every method takes the store id first and has it in every query, except the
// retention sweep (every store's old entries).
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  // Appends entries to the store's chain: one writer per store at a time on every replica (a
  // transaction-level advisory lock), so two writers never chain to the same last entry.
  // Within `tx` when given (the entry commits or rolls back with the change it records).
  append(storeId: string, entries: NewAuditEntry[], tx?: Tx): Promise<AuditEntryEntity[]> {
    const work = async (m: EntityManager) => {
      // Two statements, not one: under READ COMMITTED a statement reads the snapshot taken when it
      // starts, so a read in the statement that waits for the lock would miss the entry of the
      // writer it waited for (a duplicate seq, seen under concurrent sign-ins).
      await m.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [CHAIN_LOCK_SPACE, storeId]);
      const [last] = (await m.query('SELECT "seq", "hash" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq" DESC LIMIT 1', [storeId])) as { seq: string; hash: string }[];
      let seq = last ? BigInt(last.seq) : 0n;
      let prevHash: string | null = last?.hash ?? null;
      const rows = entries.map((e) => {
        seq += 1n;
        const row = { ...e, storeId, seq: String(seq), prevHash, hash: '' } as AuditEntryEntity;
        row.hash = chainHash(prevHash, row);
        prevHash = row.hash;
        return row;
      });
      await m.createQueryBuilder().insert().into(AuditEntryEntity).values(rows as never[]).execute();
      return rows;
    };
    return tx ? work(managerOf(this.dataSource, tx)) : this.dataSource.transaction(work);
  }

  // A page of the store's entries matching `filter`, newest first, after `position`.
  page(storeId: string, filter: AuditFilter, position: AuditPosition | undefined, limit: number): Promise<AuditEntryEntity[]> {
    const q = this.filtered(storeId, filter);
    if (position) q.andWhere('("a"."at", "a"."id") < (:pAt, :pId)', { pAt: position.at, pId: position.id });
    return q.orderBy('"a"."at"', 'DESC').addOrderBy('"a"."id"', 'DESC').limit(limit).getMany();
  }

  count(storeId: string, filter: AuditFilter): Promise<number> {
    return this.filtered(storeId, filter).getCount();
  }

  countPerPeriod(storeId: string, actions: readonly string[], unit: 'hour' | 'day', from: Date, to: Date): Promise<PeriodCount[]> {
    return this.dataSource.query(COUNT_PER_PERIOD_SQL, [storeId, actions, from, to, unit]);
  }

  // The store's chain in order, a page at a time (verification).
  chainPage(storeId: string, afterSeq: string, limit: number): Promise<AuditEntryEntity[]> {
    return this.dataSource
      .getRepository(AuditEntryEntity)
      .createQueryBuilder('a')
      .where('"a"."storeId" = :storeId AND "a"."seq" > :afterSeq', { storeId, afterSeq })
      .orderBy('"a"."seq"', 'ASC')
      .limit(limit)
      .getMany();
  }

  // Deletes up to `batch` entries older than `before` (any store); how many went.
  async deleteOlderThan(before: Date, batch: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      'WITH "gone" AS (DELETE FROM "audit_log" WHERE "id" IN (SELECT "id" FROM "audit_log" WHERE "at" < $1 LIMIT $2) RETURNING 1) SELECT count(*)::int AS "n" FROM "gone"',
      [before, batch],
    )) as { n: number }[];
    return row.n;
  }

  private filtered(storeId: string, f: AuditFilter) {
    const q = this.dataSource.getRepository(AuditEntryEntity).createQueryBuilder('a').where('"a"."storeId" = :storeId', { storeId });
    if (f.action?.endsWith('.*')) q.andWhere('"a"."action" LIKE :prefix', { prefix: `${f.action.slice(0, -1)}%` });
    else if (f.action) q.andWhere('"a"."action" = :action', { action: f.action });
    if (f.outcome) q.andWhere('"a"."outcome" = :outcome', { outcome: f.outcome });
    if (f.actorId) q.andWhere('"a"."actorId" = :actorId', { actorId: f.actorId });
    if (f.targetId) q.andWhere('"a"."targetId" = :targetId', { targetId: f.targetId });
    if (f.ip) q.andWhere('"a"."ip" = :ip', { ip: f.ip });
    if (f.from) q.andWhere('"a"."at" >= :from', { from: f.from });
    if (f.to) q.andWhere('"a"."at" <= :to', { to: f.to });
    return q;
  }
}
