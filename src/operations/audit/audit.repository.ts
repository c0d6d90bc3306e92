import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AppConfig } from '../../platform/config/app-config.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { canonicalAround, chainHash } from './audit-chain.js';
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

// An entry's columns in the order `append` writes them, with their types.
const COLUMNS = {
  id: 'uuid', storeId: 'uuid', seq: 'bigint', at: 'timestamptz', action: 'varchar', outcome: 'varchar', reason: 'varchar',
  actorType: 'varchar', actorId: 'varchar', actorRoleId: 'varchar', targetType: 'varchar', targetId: 'varchar', ip: 'varchar',
  userAgent: 'varchar', requestId: 'varchar', sessionId: 'varchar', details: 'jsonb', prevHash: 'char', hash: 'char',
} as const satisfies Record<keyof AuditEntryEntity, string>;
type Column = keyof typeof COLUMNS;
const ALL = Object.keys(COLUMNS) as Column[];
const INSERT_ROWS = 1_000;
const INSERT_INTO = `INSERT INTO "audit_log" (${ALL.map((c) => `"${c}"`).join(', ')}) VALUES `;

// One entry after the store's last, in one statement: the database gives it the next seq and
// the last entry's hash, and hashes it as chainHash does (the last two parameters are the
// canonical text before and after the seq; audit-chain.ts).
const GIVEN = ALL.filter((c) => c !== 'seq' && c !== 'prevHash' && c !== 'hash');
const APPEND_ONE = `WITH "last" AS (SELECT "seq", "hash" FROM "audit_log" WHERE "storeId" = $2::uuid ORDER BY "seq" DESC LIMIT 1),
  "next" AS (SELECT coalesce((SELECT "seq" FROM "last"), 0) + 1 AS "seq", (SELECT "hash" FROM "last") AS "prevHash")
  INSERT INTO "audit_log" (${[...GIVEN, 'seq', 'prevHash', 'hash'].map((c) => `"${c}"`).join(', ')})
  SELECT ${GIVEN.map((c, i) => `$${i + 1}::${COLUMNS[c]}`).join(', ')}, "seq", "prevHash",
    encode(sha256(convert_to(coalesce("prevHash", '') || $${GIVEN.length + 1}::text || "seq"::text || $${GIVEN.length + 2}::text, 'UTF8')), 'hex')
  FROM "next"
  RETURNING "seq", "prevHash", "hash"`;

function param(row: Partial<AuditEntryEntity>, c: Column): unknown {
  return c === 'details' && row.details ? JSON.stringify(row.details) : row[c];
}

// Tenant-level: every method takes the store id first and has it in every query, except the
// retention sweep (every store's old entries).
@Injectable()
export class AuditRepository {
  // The embedded database runs one transaction at a time (its one session belongs to a
  // connection for the whole of a transaction), so there the chain needs no lock of its own.
  private readonly chainLock: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    this.chainLock = !config.embeddedDatabase;
  }

  // Appends entries to the store's chain: one writer per store at a time on every replica (a
  // transaction-level advisory lock), so two writers never chain to the same last entry.
  // Within `tx` when given (the entry commits or rolls back with the change it records).
  // Plain SQL, as a login's other statements: a sign-in writes its entry here.
  append(storeId: string, entries: NewAuditEntry[], tx?: Tx): Promise<AuditEntryEntity[]> {
    const work = async (m: EntityManager) => {
      // The lock and the read of the last entry are two statements, not one: under READ
      // COMMITTED a statement reads the snapshot taken when it starts, so a read in the statement
      // that waits for the lock would miss the entry of the writer it waited for (a duplicate
      // seq, seen under concurrent sign-ins).
      if (this.chainLock) await m.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [CHAIN_LOCK_SPACE, storeId]);
      if (entries.length === 1) return [await this.appendOne(m, { ...entries[0], storeId })];
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
      // A statement takes at most 65,535 parameters: a long queue goes in slices.
      for (let from = 0; from < rows.length; from += INSERT_ROWS) {
        const slice = rows.slice(from, from + INSERT_ROWS);
        const values = slice.map((_, r) => `(${ALL.map((_, c) => `$${r * ALL.length + c + 1}`).join(', ')})`);
        await m.query(INSERT_INTO + values.join(', '), slice.flatMap((row) => ALL.map((c) => param(row, c))));
      }
      return rows;
    };
    return tx ? work(managerOf(this.dataSource, tx)) : this.dataSource.transaction(work);
  }

  // A sign-in's entry (or any one alone): one statement instead of a read and an insert.
  private async appendOne(m: EntityManager, entry: Omit<AuditEntryEntity, 'seq' | 'prevHash' | 'hash'>): Promise<AuditEntryEntity> {
    const [returned] = (await m.query(APPEND_ONE, [...GIVEN.map((c) => param(entry, c)), ...canonicalAround(entry)])) as [{ seq: string; prevHash: string | null; hash: string }];
    return { ...entry, ...returned };
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
