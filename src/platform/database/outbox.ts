import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { managerOf, type Tx } from './transactions.js';

// One row of the outbox: an event as its writer stored it. `id` is stable (the same on every
// delivery, for listeners to recognise a repeat); `payload` carries ids, never whole rows.
export interface OutboxRow {
  id: string;
  storeId: string;
  name: string;
  payload: Record<string, unknown>;
}

const TABLE = '"domain_event_outbox"';
const RETURNED = '"id", "storeId", "name", "payload"';

// Undelivered rows of this service ($1) a sweep may take: held for `$2` seconds by whoever took
// them last, twice as long after each claim, up to 16 times as long (a row whose listener keeps
// failing is tried less often; a broker back from an outage gets what failed within 8 minutes at
// the default lease). The first bound on `takenAt` is the index's range, the second the row's own
// lease. SKIP LOCKED: replicas sweeping at once take different rows, none waits for another. The
// claim is the statement itself: no transaction is held while the rows are delivered (on the
// embedded database a listener's query would wait for it for ever, ADR 1).
const CLAIM = `UPDATE ${TABLE} o SET "takenAt" = now(), "attempts" = o."attempts" + 1
  WHERE o."id" IN (
    SELECT "id" FROM ${TABLE}
    WHERE "service" = $1 AND "dispatchedAt" IS NULL AND "takenAt" <= now() - make_interval(secs => $2::double precision)
      AND "takenAt" <= now() - make_interval(secs => $2::double precision * power(2, least("attempts", 4)))
    ORDER BY "takenAt", "createdAt"
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  )
  RETURNING o."id", o."storeId", o."name", o."payload", o."createdAt"`;

// The outbox's table (migration 1766000000000), this deployment's rows (its SERVICE_CODENAME).
// Knows no event by name: DomainEvents (src/kernel/) writes and delivers them.
@Injectable()
export class Outbox {
  private readonly service: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    this.service = config.env.SERVICE_CODENAME;
  }

  // In the change's transaction: the change and its events commit or roll back together.
  async insert(rows: readonly OutboxRow[], tx: Tx): Promise<void> {
    if (!rows.length) return;
    const values = rows.map((_, i) => `($1, $${i * 4 + 2}::uuid, $${i * 4 + 3}::uuid, $${i * 4 + 4}, $${i * 4 + 5}::jsonb)`);
    await managerOf(this.dataSource, tx).query(
      `INSERT INTO ${TABLE} ("service", "id", "storeId", "name", "payload") VALUES ${values.join(', ')}`,
      [this.service, ...rows.flatMap((r) => [r.id, r.storeId, r.name, JSON.stringify(r.payload)])],
    );
  }

  // For a repository that writes its change and the change's events in one statement: an INSERT
  // of the rows `select` gives (columns id, storeId, name, payload, in that order), answering
  // what DomainEvents.written takes. (The codename is a literal: SERVICE_CODENAME is checked to
  // be lower-case letters, digits and dashes.)
  insertFrom(select: string): string {
    return `INSERT INTO ${TABLE} ("id", "storeId", "name", "payload", "service") SELECT s.*, '${this.service}' FROM (${select}) s RETURNING ${RETURNED}`;
  }

  // Up to `limit` rows no one holds any more (see CLAIM), oldest first, now held by the caller.
  async claim(leaseSeconds: number, limit: number): Promise<OutboxRow[]> {
    const [rows] = (await this.dataSource.query(CLAIM, [this.service, leaseSeconds, limit])) as [(OutboxRow & { createdAt: Date })[], number];
    return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()).map(({ id, storeId, name, payload }) => ({ id, storeId, name, payload }));
  }

  // Delivered to every listener: kept until the retention, never delivered again.
  async markDispatched(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.dataSource.query(`UPDATE ${TABLE} SET "dispatchedAt" = now() WHERE "id" = ANY($1::uuid[]) AND "dispatchedAt" IS NULL`, [ids]);
  }

  // Deletes up to `batch` rows delivered more than `hours` ago (every deployment's); how many went.
  async prune(hours: number, batch: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      `WITH "gone" AS (
        DELETE FROM ${TABLE} WHERE "id" IN (
          SELECT "id" FROM ${TABLE} WHERE "dispatchedAt" IS NOT NULL AND "dispatchedAt" < now() - make_interval(hours => $1::int) LIMIT $2
        ) RETURNING 1
      ) SELECT count(*)::int AS "n" FROM "gone"`,
      [hours, batch],
    )) as { n: number }[];
    return row.n;
  }
}
