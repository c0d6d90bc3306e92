import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Notifications1764000000000 implements MigrationInterface {
  name = 'Notifications1764000000000';

  async up(q: QueryRunner): Promise<void> {
    // Preferred languages for notifications: the user's, then the store's.
    await q.query(`ALTER TABLE "users" ADD COLUMN "language" varchar(35)`);
    await q.query(`ALTER TABLE "stores" ADD COLUMN "language" varchar(35)`);
    await q.query(`
      CREATE TABLE "notifications" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "userId" uuid REFERENCES "users" ("id") ON DELETE CASCADE,
        "channel" varchar(16) NOT NULL,
        "template" varchar(64) NOT NULL,
        "recipient" varchar(320),
        "contextVars" jsonb NOT NULL DEFAULT '{}',
        "secretVars" jsonb,
        "acceptLanguage" varchar(200),
        "status" varchar(16) NOT NULL,
        "attempts" jsonb NOT NULL DEFAULT '[]',
        "deliveredBy" varchar(64),
        "deliveredAt" timestamptz,
        "content" jsonb,
        "readAt" timestamptz,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        "updatedAt" timestamptz NOT NULL DEFAULT now()
      )`);
    // The inbox: a user's in-app notifications, newest first, unread ones apart.
    await q.query(`CREATE INDEX "notifications_inbox_idx" ON "notifications" ("storeId", "userId", "createdAt" DESC) WHERE "channel" = 'inApp'`);
    await q.query(`CREATE INDEX "notifications_status_idx" ON "notifications" ("status") WHERE "status" = 'queued'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "notifications"`);
    await q.query(`ALTER TABLE "stores" DROP COLUMN "language"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "language"`);
  }
}
