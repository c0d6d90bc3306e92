import type { MigrationInterface, QueryRunner } from 'typeorm';

// The domain events' outbox (docs/events.md, ADR 26): a change writes its events here in its
// own transaction; they are delivered after the commit, at least once, each with its `id`.
// - `service`: the writer's SERVICE_CODENAME: a deployment delivers its own events only (its
//   listeners publish them under its codename).
// - `takenAt`: when the row was last taken for delivery: written (its writer delivers it at once)
//   or claimed by a replica's sweep. A sweep takes an undelivered row once its holder has had it
//   for the lease (longer after each claim), so a writer that died leaves nothing behind.
// - `attempts`: the sweeps' claims of it.
// - `dispatchedAt`: when every listener had it; such rows are pruned after the retention.
// The partial indexes serve the sweeps (undelivered rows only) and the pruning (delivered ones).
export class DomainEventOutbox1766000000000 implements MigrationInterface {
  name = 'DomainEventOutbox1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "domain_event_outbox" (
        "id" uuid PRIMARY KEY,
        "service" varchar(31) NOT NULL,
        "storeId" uuid NOT NULL,
        "name" varchar(200) NOT NULL,
        "payload" jsonb NOT NULL,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        "takenAt" timestamptz NOT NULL DEFAULT now(),
        "attempts" integer NOT NULL DEFAULT 0,
        "dispatchedAt" timestamptz
      )`);
    await q.query(`CREATE INDEX "domain_event_outbox_pending_idx" ON "domain_event_outbox" ("service", "takenAt") WHERE "dispatchedAt" IS NULL`);
    await q.query(`CREATE INDEX "domain_event_outbox_dispatched_idx" ON "domain_event_outbox" ("dispatchedAt") WHERE "dispatchedAt" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "domain_event_outbox"`);
  }
}
