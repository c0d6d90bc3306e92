import type { MigrationInterface, QueryRunner } from 'typeorm';

// Authenticator apps (TOTP) and recovery codes; both go with their user.
export class Totp1765000000000 implements MigrationInterface {
  name = 'Totp1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "totp_factors" (
        "userId" uuid PRIMARY KEY REFERENCES "users" ("id") ON DELETE CASCADE,
        "storeId" uuid NOT NULL,
        "secret" text NOT NULL,
        "createdAt" timestamptz NOT NULL,
        "confirmedAt" timestamptz,
        "lastUsedStep" bigint NOT NULL DEFAULT -1
      )`);
    await q.query(`
      CREATE TABLE "recovery_codes" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL,
        "userId" uuid NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
        "codeHash" varchar(64) NOT NULL,
        "createdAt" timestamptz NOT NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX "recovery_codes_user_hash_idx" ON "recovery_codes" ("userId", "codeHash")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "recovery_codes"`);
    await q.query(`DROP TABLE "totp_factors"`);
  }
}
