import type { MigrationInterface, QueryRunner } from 'typeorm';

// A webhook delivery belongs to the deployment that wrote it (its SERVICE_CODENAME), as the
// outbox's events do: deployments sharing a database sweep their own deliveries only, each with
// its own settings (which addresses it may call) and its own clock.
export class WebhookDeliveryService1766200000000 implements MigrationInterface {
  name = 'WebhookDeliveryService1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhook_deliveries" ADD COLUMN "service" varchar(31) NOT NULL DEFAULT ''`);
    await q.query(`DROP INDEX "webhook_deliveries_due_idx"`);
    await q.query(`CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" ("service", "nextAttemptAt") WHERE "status" = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "webhook_deliveries_due_idx"`);
    await q.query(`CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" ("nextAttemptAt") WHERE "status" = 'pending'`);
    await q.query(`ALTER TABLE "webhook_deliveries" DROP COLUMN "service"`);
  }
}
