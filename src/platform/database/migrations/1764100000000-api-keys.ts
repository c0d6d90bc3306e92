import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ApiKeys1764100000000 implements MigrationInterface {
  name = 'ApiKeys1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "api_keys" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "userId" uuid NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
        "name" varchar(100) NOT NULL,
        "prefix" varchar(24) NOT NULL,
        "keyHash" char(64) NOT NULL,
        "roles" text[] NOT NULL,
        "permissions" text[] NOT NULL DEFAULT '{}',
        "expiresAt" timestamptz,
        "lastUsedAt" timestamptz,
        "createdAt" timestamptz NOT NULL
      )`);
    // Lookup is by hash only.
    await q.query(`CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys" ("keyHash")`);
    await q.query(`CREATE INDEX "api_keys_store_user_idx" ON "api_keys" ("storeId", "userId")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "api_keys"`);
  }
}
