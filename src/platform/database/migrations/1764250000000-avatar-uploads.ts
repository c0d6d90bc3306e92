import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AvatarUploads1764250000000 implements MigrationInterface {
  name = 'AvatarUploads1764250000000';

  async up(q: QueryRunner): Promise<void> {
    // Files uploaded before this table existed have no row: they are never capped or deleted.
    await q.query(`
      CREATE TABLE "avatar_uploads" (
        "accessKey" char(40) PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "userId" uuid NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
        "createdAt" timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX "avatar_uploads_store_user_idx" ON "avatar_uploads" ("storeId", "userId", "createdAt")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "avatar_uploads"`);
  }
}
