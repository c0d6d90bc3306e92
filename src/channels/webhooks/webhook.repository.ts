import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { WebhookDeliveryEntity, WebhookEndpointEntity, type DeliveryStatus } from './webhook.entity.js';

export type NewDelivery = Pick<WebhookDeliveryEntity, 'id' | 'endpointId' | 'eventId' | 'topic' | 'body' | 'nextAttemptAt'>;

export interface AttemptOutcome {
  status: DeliveryStatus;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  at: Date;
  nextAttemptAt: Date | null;
}

// Endpoints and deliveries, the store id first on every store-level method. The queue's worker
// reads a delivery by its id alone (a job names only the delivery, whose row names its store).
@Injectable()
export class WebhookRepository {
  private readonly service: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    this.service = config.env.SERVICE_CODENAME;
  }

  private get endpoints() {
    return this.dataSource.getRepository(WebhookEndpointEntity);
  }

  private get deliveries() {
    return this.dataSource.getRepository(WebhookDeliveryEntity);
  }

  async insertEndpoint(storeId: string, row: Omit<WebhookEndpointEntity, 'storeId' | 'createdAt' | 'updatedAt'>, tx?: Tx): Promise<WebhookEndpointEntity> {
    const manager = managerOf(this.dataSource, tx);
    await manager.insert(WebhookEndpointEntity, { ...row, storeId });
    return manager.findOneByOrFail(WebhookEndpointEntity, { storeId, id: row.id });
  }

  countEndpoints(storeId: string, tx?: Tx): Promise<number> {
    return managerOf(this.dataSource, tx).countBy(WebhookEndpointEntity, { storeId });
  }

  findEndpoint(storeId: string, id: string, tx?: Tx): Promise<WebhookEndpointEntity | null> {
    return managerOf(this.dataSource, tx).findOneBy(WebhookEndpointEntity, { storeId, id });
  }

  listEndpoints(storeId: string, page: PageRequest): Promise<[WebhookEndpointEntity[], number]> {
    return this.endpoints.findAndCount({ where: { storeId }, order: { createdAt: 'DESC', id: 'DESC' }, skip: page.offset, take: page.pageRowCount });
  }

  // The store's enabled endpoints (the fan-out filters them by topic).
  enabledEndpoints(storeId: string): Promise<WebhookEndpointEntity[]> {
    return this.endpoints.findBy({ storeId, enabled: true });
  }

  async updateEndpoint(storeId: string, id: string, changes: Partial<Omit<WebhookEndpointEntity, 'id' | 'storeId' | 'createdAt'>>, tx?: Tx): Promise<WebhookEndpointEntity | null> {
    const manager = managerOf(this.dataSource, tx);
    await manager.update(WebhookEndpointEntity, { storeId, id }, { ...changes, updatedAt: () => 'now()' } as never);
    return manager.findOneBy(WebhookEndpointEntity, { storeId, id });
  }

  async deleteEndpoint(storeId: string, id: string, tx?: Tx): Promise<boolean> {
    const result = await managerOf(this.dataSource, tx).delete(WebhookEndpointEntity, { storeId, id });
    return (result.affected ?? 0) > 0;
  }

  // An endpoint that answered 2xx is failing no more; one that did not is failing since the
  // first such attempt. Answers when it has been failing since.
  async noteOutcome(storeId: string, id: string, ok: boolean, at: Date): Promise<Date | null> {
    if (ok) {
      await this.dataSource.query(`UPDATE "webhook_endpoints" SET "failingSince" = NULL WHERE "storeId" = $1 AND "id" = $2 AND "failingSince" IS NOT NULL`, [storeId, id]);
      return null;
    }
    const [rows] = (await this.dataSource.query(
      `UPDATE "webhook_endpoints" SET "failingSince" = coalesce("failingSince", $3::timestamptz) WHERE "storeId" = $1 AND "id" = $2 RETURNING "failingSince"`,
      [storeId, id, at],
    )) as [{ failingSince: Date }[], number];
    return rows[0]?.failingSince ?? null;
  }

  // Disables an enabled endpoint; whether this call did.
  async disable(storeId: string, id: string, reason: string): Promise<boolean> {
    const [, affected] = (await this.dataSource.query(`UPDATE "webhook_endpoints" SET "enabled" = false, "disabledReason" = $3, "updatedAt" = now() WHERE "storeId" = $1 AND "id" = $2 AND "enabled"`, [storeId, id, reason])) as [
      unknown,
      number,
    ];
    return affected > 0;
  }

  // One delivery per endpoint and event: the ones written (an event handed over again writes none).
  async insertDeliveries(storeId: string, rows: readonly NewDelivery[]): Promise<string[]> {
    if (!rows.length) return [];
    const result = await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(WebhookDeliveryEntity)
      .values(rows.map((r) => ({ ...r, storeId, service: this.service, status: 'pending' as const })))
      .orIgnore()
      .returning(['id'])
      .execute();
    return (result.raw as { id: string }[]).map((r) => r.id);
  }

  findDelivery(storeId: string, endpointId: string, id: string): Promise<WebhookDeliveryEntity | null> {
    return this.deliveries.findOneBy({ storeId, endpointId, id });
  }

  findForAttempt(id: string): Promise<WebhookDeliveryEntity | null> {
    return this.deliveries.findOneBy({ id });
  }

  listDeliveries(storeId: string, endpointId: string, status: DeliveryStatus | undefined, page: PageRequest): Promise<[WebhookDeliveryEntity[], number]> {
    return this.deliveries.findAndCount({
      where: { storeId, endpointId, ...(status && { status }) },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.pageRowCount,
    });
  }

  // This deployment's pending deliveries due by `now`, taken for `leaseMs` (their next attempt is moved past the
  // lease, so another replica's sweep leaves them while this one attempts them; a process that
  // died leaves them due again when the lease ends). SKIP LOCKED: sweeps side by side take
  // different rows.
  // `skip`: endpoints whose deliveries the caller cannot attempt now (every slot in use).
  async claimDue(now: Date, leaseMs: number, limit: number, skip: readonly string[] = []): Promise<string[]> {
    const [rows] = (await this.dataSource.query(
      `UPDATE "webhook_deliveries" d SET "nextAttemptAt" = $1::timestamptz + make_interval(secs => $2::double precision / 1000)
        WHERE d."id" IN (
          SELECT "id" FROM "webhook_deliveries" WHERE "status" = 'pending' AND "service" = $5 AND "nextAttemptAt" <= $1::timestamptz AND NOT ("endpointId" = ANY($4::uuid[]))
          ORDER BY "nextAttemptAt" LIMIT $3 FOR UPDATE SKIP LOCKED
        ) RETURNING d."id"`,
      [now, leaseMs, limit, skip, this.service],
    )) as [{ id: string }[], number];
    return rows.map((r) => r.id);
  }

  // Takes one delivery for an attempt now (a retry asked for), unless it was delivered.
  async takeNow(storeId: string, id: string, now: Date, leaseMs: number): Promise<boolean> {
    const [, affected] = (await this.dataSource.query(
      `UPDATE "webhook_deliveries" SET "status" = 'pending', "nextAttemptAt" = $3::timestamptz + make_interval(secs => $4::double precision / 1000) WHERE "storeId" = $1 AND "id" = $2`,
      [storeId, id, now, leaseMs],
    )) as [unknown, number];
    return affected > 0;
  }

  // Puts a delivery back, untried, for `at` (its endpoint was busy).
  async postpone(id: string, at: Date): Promise<void> {
    await this.deliveries.update({ id, status: 'pending' }, { nextAttemptAt: at });
  }

  async recordAttempt(id: string, outcome: AttemptOutcome): Promise<void> {
    await this.dataSource.query(
      `UPDATE "webhook_deliveries" SET "status" = $2, "attempts" = "attempts" + 1, "responseStatus" = $3, "responseBody" = $4, "error" = $5, "durationMs" = $6, "lastAttemptAt" = $7, "nextAttemptAt" = $8 WHERE "id" = $1`,
      [id, outcome.status, outcome.responseStatus, outcome.responseBody, outcome.error, outcome.durationMs, outcome.at, outcome.nextAttemptAt],
    );
  }

  // Pending deliveries of an endpoint that was disabled: failed, with why.
  async failPending(storeId: string, endpointId: string, why: string): Promise<void> {
    await this.deliveries.update({ storeId, endpointId, status: 'pending' }, { status: 'failed', nextAttemptAt: null, error: why });
  }
}
