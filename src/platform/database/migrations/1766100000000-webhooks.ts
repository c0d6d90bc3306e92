import type { MigrationInterface, QueryRunner } from 'typeorm';

// Webhooks (docs/webhooks.md): a store's endpoints and the deliveries of its events to them.
// - `webhook_endpoints.secret` / `previousSecret`: sealed (KEY_ENCRYPTION_SECRET); the previous
//   one signs beside the new one until `previousSecretUntil`.
// - `failingSince`: the first failed attempt since the endpoint last answered 2xx (null while
//   it answers); an endpoint failing for `webhooks.disableAfterFailingDays` is disabled.
// - `webhook_deliveries`: one per endpoint and event (`eventId`, the `webhook-id`, unique per
//   endpoint: an event handed over twice is delivered once). `body` is the JSON sent, the same on
//   every attempt. A pending delivery is due at `nextAttemptAt`; the one who takes it moves that
//   on by a lease, so a process that died leaves it due again.
export class Webhooks1766100000000 implements MigrationInterface {
  name = 'Webhooks1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "webhook_endpoints" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL,
        "url" varchar(2048) NOT NULL,
        "topics" jsonb NOT NULL,
        "description" varchar(500),
        "enabled" boolean NOT NULL DEFAULT true,
        "disabledReason" varchar(64),
        "secret" text NOT NULL,
        "previousSecret" text,
        "previousSecretUntil" timestamptz,
        "failingSince" timestamptz,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        "updatedAt" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX "webhook_endpoints_store_idx" ON "webhook_endpoints" ("storeId", "createdAt")`);
    await q.query(`
      CREATE TABLE "webhook_deliveries" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL,
        "endpointId" uuid NOT NULL REFERENCES "webhook_endpoints" ("id") ON DELETE CASCADE,
        "eventId" varchar(64) NOT NULL,
        "topic" varchar(200) NOT NULL,
        "body" text NOT NULL,
        "status" varchar(16) NOT NULL DEFAULT 'pending',
        "attempts" integer NOT NULL DEFAULT 0,
        "responseStatus" integer,
        "responseBody" text,
        "error" varchar(300),
        "durationMs" integer,
        "lastAttemptAt" timestamptz,
        "nextAttemptAt" timestamptz,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "webhook_deliveries_event_uq" UNIQUE ("endpointId", "eventId")
      )`);
    await q.query(`CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" ("endpointId", "createdAt" DESC, "id" DESC)`);
    await q.query(`CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" ("nextAttemptAt") WHERE "status" = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhook_deliveries"`);
    await q.query(`DROP TABLE "webhook_endpoints"`);
  }
}
