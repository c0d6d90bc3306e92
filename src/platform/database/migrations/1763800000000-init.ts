import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1763800000000 implements MigrationInterface {
  name = 'Init1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "stores" (
        "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        "codename" varchar(40) NOT NULL,
        "name" varchar(100) NOT NULL,
        "fullname" varchar(200) NOT NULL,
        "avatar" varchar(2048) NOT NULL,
        "isActive" boolean NOT NULL DEFAULT true,
        "ownerId" uuid,
        "customData" jsonb NOT NULL DEFAULT '{}',
        "recordVersion" integer NOT NULL DEFAULT 1,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        "updatedAt" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "stores_codename_format" CHECK ("codename" ~ '^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$')
      )`);
    await q.query(`CREATE UNIQUE INDEX "stores_codename_key" ON "stores" ("codename")`);
    // briefstores pages in creation order
    await q.query(`CREATE INDEX "stores_created_idx" ON "stores" ("createdAt", "id")`);

    await q.query(`
      CREATE TABLE "users" (
        "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "email" varchar(254),
        "mobile" varchar(16),
        "fullname" varchar(200),
        "name" varchar(100),
        "surname" varchar(100),
        "passwordHash" varchar(100) NOT NULL,
        "avatar" varchar(2048) NOT NULL,
        "roles" text[] NOT NULL,
        "emailVerified" boolean NOT NULL DEFAULT false,
        "mobileVerified" boolean NOT NULL DEFAULT false,
        "isActive" boolean NOT NULL DEFAULT true,
        "ownerId" uuid,
        "customData" jsonb NOT NULL DEFAULT '{}',
        "recordVersion" integer NOT NULL DEFAULT 1,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        "updatedAt" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "users_has_identifier" CHECK ("email" IS NOT NULL OR "mobile" IS NOT NULL)
      )`);
    // Identifiers are unique per store; login looks users up by exactly these expressions.
    await q.query(`CREATE UNIQUE INDEX "users_store_email_key" ON "users" ("storeId", lower("email")) WHERE "email" IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX "users_store_mobile_key" ON "users" ("storeId", "mobile") WHERE "mobile" IS NOT NULL`);
    await q.query(`CREATE INDEX "users_store_created_idx" ON "users" ("storeId", "createdAt", "id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "users"`);
    await q.query(`DROP TABLE "stores"`);
  }
}
