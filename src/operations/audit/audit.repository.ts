import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AppConfig } from '../../platform/config/app-config.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { keyedChainHash } from './audit-chain.js';
import { AuditChainKeys } from './audit-keys.js';
import { AuditCheckpointEntity, AuditEntryEntity } from './audit.entity.js';

export type NewAuditEntry = Omit<AuditEntryEntity, 'storeId' | 'seq' | 'prevHash' | 'hash' | 'keyId'>;

// A store's last entry: where the next one links.
interface Head {
  seq: string;
  hash: string;
}

// The newest entry of a store, and whether a checkpoint names it already.
export interface ChainHead extends Head {
  at: Date;
  anchored: boolean;
}

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

// An entry's columns in the order `append` writes them, with their types.
const COLUMNS = {
  id: 'uuid', storeId: 'uuid', seq: 'bigint', at: 'timestamptz', action: 'varchar', outcome: 'varchar', reason: 'varchar',
  actorType: 'varchar', actorId: 'varchar', actorRoleId: 'varchar', targetType: 'varchar', targetId: 'varchar', ip: 'varchar',
  userAgent: 'varchar', requestId: 'varchar', sessionId: 'varchar', details: 'jsonb', prevHash: 'char(64)', hash: 'char(64)', keyId: 'varchar',
} as const satisfies Record<keyof AuditEntryEntity, string>;
type Column = keyof typeof COLUMNS;
const ALL = Object.keys(COLUMNS) as Column[];
const INSERT_ROWS = 1_000;
const INSERT_INTO = `INSERT INTO "audit_log" (${ALL.map((c) => `"${c}"`).join(', ')}) VALUES `;

// The store's chain lock (per store, on every replica) and its last entry, in one statement
// (migration 1765800000000: the function reads after the lock is granted).
const LOCKED_HEAD = 'SELECT "lastSeq" AS "seq", "lastHash" AS "hash" FROM "audit_chain_head"($1)';
const HEAD = 'SELECT "seq", "hash" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq" DESC LIMIT 1';

// One entry after the store's last, on the embedded database, in one statement: inserted only if
// that last entry is still the one the entry was chained to ($1 store, $2 its seq, $3 its hash;
// null and null for an empty chain). Nothing is inserted otherwise, and no error aborts the
// transaction it runs in.
const APPEND_AFTER = `WITH "last" AS (${HEAD})
  INSERT INTO "audit_log" (${ALL.map((c) => `"${c}"`).join(', ')})
  SELECT ${ALL.map((c, i) => `$${i + 4}::${COLUMNS[c]}`).join(', ')}
  WHERE (SELECT "seq" FROM "last") IS NOT DISTINCT FROM $2::bigint AND (SELECT "hash" FROM "last") IS NOT DISTINCT FROM $3::char(64)
  RETURNING 1`;

// The same on PostgreSQL, under the store's chain lock: the entry is inserted if the last entry is
// the one it was chained to, and the statement answers the last entry with how many it added (0:
// the guess was wrong; the caller chains the entry again to that last entry, the lock still held).
const LOCKED_APPEND_AFTER = `WITH "last" AS (${LOCKED_HEAD}),
  "added" AS (
    INSERT INTO "audit_log" (${ALL.map((c) => `"${c}"`).join(', ')})
    SELECT ${ALL.map((c, i) => `$${i + 4}::${COLUMNS[c]}`).join(', ')}
    WHERE (SELECT "seq" FROM "last") IS NOT DISTINCT FROM $2::bigint AND (SELECT "hash" FROM "last") IS NOT DISTINCT FROM $3::char(64)
    RETURNING 1
  )
  SELECT (SELECT "seq" FROM "last") AS "seq", (SELECT "hash" FROM "last") AS "hash", (SELECT count(*) FROM "added")::int AS "added"`;

// Last entries remembered per store, at most this many stores.
const HEADS_KEPT = 10_000;

function param(row: Partial<AuditEntryEntity>, c: Column): unknown {
  return c === 'details' && row.details ? JSON.stringify(row.details) : row[c];
}

// Tenant-level: every method takes the store id first and has it in every query, except the
// retention sweeps (every store's old entries).
@Injectable()
export class AuditRepository {
  // The embedded database runs one transaction at a time (its one session belongs to a
  // connection for the whole of a transaction), so there the chain needs no lock of its own.
  private readonly chainLock: boolean;
  // Each store's last entry as this process wrote it. Embedded, the only writer is this process,
  // so the guess is nearly always right; on PostgreSQL it is while one replica serves a store's
  // writes. The insert checks it (another replica's entry, a rolled-back or removed one makes it
  // wrong: then the entry is chained again to what the database holds).
  private readonly heads = new Map<string, Head>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keys: AuditChainKeys,
    config: AppConfig,
  ) {
    this.chainLock = !config.embeddedDatabase;
  }

  // Appends entries to the store's chain, their hashes HMACs under the current chain key, computed
  // here: the key never reaches the database. One writer per store at a time on every replica (a
  // transaction-level advisory lock), so two writers never chain to the same last entry. Within
  // `tx` when given (the entry commits or rolls back with the change it records). Plain SQL, as a
  // login's other statements: a sign-in writes its entry here in one statement when this process
  // wrote the store's last entry (on PostgreSQL the lock, the check and the insert), else two.
  append(storeId: string, entries: NewAuditEntry[], tx?: Tx): Promise<AuditEntryEntity[]> {
    const work = async (m: EntityManager) => {
      let head: Head | undefined;
      let read = false;
      const guess = entries.length === 1 ? this.heads.get(storeId) : undefined;
      if (guess) {
        const rows = this.chained(storeId, entries, guess);
        const values = [storeId, guess.seq, guess.hash, ...ALL.map((c) => param(rows[0], c))];
        if (!this.chainLock) {
          if ((await m.query(APPEND_AFTER, values)).length) return this.remember(storeId, rows);
        } else {
          const [answer] = (await m.query(LOCKED_APPEND_AFTER, values)) as (Head & { added: number })[];
          if (answer.added) return this.remember(storeId, rows);
          // The lock is held: the last entry it answered stays the last.
          head = answer.seq === null ? undefined : { seq: answer.seq, hash: answer.hash };
          read = true;
        }
      }
      if (!read) [head] = (await m.query(this.chainLock ? LOCKED_HEAD : HEAD, [storeId])) as Head[];
      const rows = this.chained(storeId, entries, head);
      // A statement takes at most 65,535 parameters: a long queue goes in slices.
      for (let from = 0; from < rows.length; from += INSERT_ROWS) {
        const slice = rows.slice(from, from + INSERT_ROWS);
        const values = slice.map((_, r) => `(${ALL.map((_, c) => `$${r * ALL.length + c + 1}`).join(', ')})`);
        await m.query(INSERT_INTO + values.join(', '), slice.flatMap((row) => ALL.map((c) => param(row, c))));
      }
      return this.remember(storeId, rows);
    };
    return tx ? work(managerOf(this.dataSource, tx)) : this.dataSource.transaction(work);
  }

  // The entries as they follow `head`, numbered and hashed.
  private chained(storeId: string, entries: NewAuditEntry[], head: Head | undefined): AuditEntryEntity[] {
    const { id: keyId, key } = this.keys.current;
    let seq = head ? BigInt(head.seq) : 0n;
    let prevHash = head?.hash ?? null;
    return entries.map((e) => {
      seq += 1n;
      const row = { ...e, storeId, seq: String(seq), prevHash, hash: '', keyId } as AuditEntryEntity;
      row.hash = keyedChainHash(key, prevHash, row);
      prevHash = row.hash;
      return row;
    });
  }

  private remember(storeId: string, rows: AuditEntryEntity[]): AuditEntryEntity[] {
    const last = rows.at(-1)!;
    this.heads.delete(storeId);
    this.heads.set(storeId, { seq: last.seq, hash: last.hash });
    if (this.heads.size > HEADS_KEPT) this.heads.delete(this.heads.keys().next().value!);
    return rows;
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

  // The store's newest entry, and whether a checkpoint names it; undefined for an empty chain.
  async head(storeId: string): Promise<ChainHead | undefined> {
    const [row] = (await this.dataSource.query(
      `SELECT a."seq", a."hash", a."at", EXISTS (SELECT 1 FROM "audit_checkpoint" c WHERE c."storeId" = a."storeId" AND c."seq" = a."seq") AS "anchored"
        FROM "audit_log" a WHERE a."storeId" = $1 ORDER BY a."seq" DESC LIMIT 1`,
      [storeId],
    )) as ChainHead[];
    return row;
  }

  // A checkpoint kept once: another replica's of the same entry stays. Whether this one was kept.
  async addCheckpoint(c: AuditCheckpointEntity): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `INSERT INTO "audit_checkpoint" ("storeId", "seq", "hash", "at", "signedAt", "keyId", "mac", "signature") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT ("storeId", "seq") DO NOTHING RETURNING 1`,
      [c.storeId, c.seq, c.hash, c.at, c.signedAt, c.keyId, c.mac, c.signature],
    )) as unknown[];
    return rows.length > 0;
  }

  // The store's newest checkpoints of entries at or after `since`, newest first; with `matching`,
  // only those whose entry is still there with the hash they name.
  checkpoints(storeId: string, since: Date, limit: number, matching = false): Promise<AuditCheckpointEntity[]> {
    return this.dataSource.query(
      `SELECT c."storeId", c."seq"::text AS "seq", c."hash", c."at", c."signedAt", c."keyId", c."mac", c."signature" FROM "audit_checkpoint" c
        ${matching ? 'JOIN "audit_log" a ON a."storeId" = c."storeId" AND a."seq" = c."seq" AND a."hash" = c."hash"' : ''}
        WHERE c."storeId" = $1 AND c."at" >= $2 ORDER BY c."seq" DESC LIMIT $3`,
      [storeId, since, limit],
    );
  }

  // The hash of the store's entry `seq`, if it is there.
  async hashAt(storeId: string, seq: string): Promise<string | undefined> {
    const [row] = (await this.dataSource.query('SELECT "hash" FROM "audit_log" WHERE "storeId" = $1 AND "seq" = $2', [storeId, seq])) as { hash: string }[];
    return row?.hash;
  }

  // Deletes up to `batch` checkpoints of entries older than `before` (any store); how many went.
  async deleteCheckpointsOlderThan(before: Date, batch: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      `WITH "gone" AS (DELETE FROM "audit_checkpoint" WHERE ("storeId", "seq") IN (SELECT "storeId", "seq" FROM "audit_checkpoint" WHERE "at" < $1 LIMIT $2) RETURNING 1)
        SELECT count(*)::int AS "n" FROM "gone"`,
      [before, batch],
    )) as { n: number }[];
    return row.n;
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
