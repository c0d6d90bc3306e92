import type { MigrationInterface, QueryRunner } from 'typeorm';

// The audit log: append-only, one hash chain per store (`seq` orders it). The application never
// updates a row and deletes only past the retention (docs/audit-log.md).
export class AuditLog1765200000000 implements MigrationInterface {
  name = 'AuditLog1765200000000';

  async up(q: QueryRunner): Promise<void> {
    // No foreign key to stores: a deleted store's trail stays until its retention ends.
    await q.query(`
      CREATE TABLE "audit_log" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL,
        "seq" bigint NOT NULL,
        "at" timestamptz NOT NULL,
        "action" varchar(100) NOT NULL,
        "outcome" varchar(10) NOT NULL,
        "reason" varchar(100),
        "actorType" varchar(20) NOT NULL,
        "actorId" varchar(200),
        "actorRoleId" varchar(200),
        "targetType" varchar(50),
        "targetId" varchar(200),
        "ip" varchar(100),
        "userAgent" varchar(500),
        "requestId" varchar(200),
        "sessionId" varchar(200),
        "details" jsonb,
        "prevHash" char(64),
        "hash" char(64) NOT NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX "audit_log_store_seq_key" ON "audit_log" ("storeId", "seq")`);
    await q.query(`CREATE INDEX "audit_log_store_at_idx" ON "audit_log" ("storeId", "at" DESC, "id")`);
    await q.query(`CREATE INDEX "audit_log_store_action_idx" ON "audit_log" ("storeId", "action", "at")`);
    await q.query(`CREATE INDEX "audit_log_store_actor_idx" ON "audit_log" ("storeId", "actorId", "at")`);
    await q.query(`CREATE INDEX "audit_log_store_target_idx" ON "audit_log" ("storeId", "targetId", "at")`);
    await q.query(`CREATE INDEX "audit_log_at_idx" ON "audit_log" ("at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "audit_log"`);
  }
}
