import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SocialLogin1764320000000 implements MigrationInterface {
  name = 'SocialLogin1764320000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "social_identities" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "userId" uuid NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
        "provider" varchar(32) NOT NULL,
        "providerUserId" varchar(255) NOT NULL,
        "createdAt" timestamptz NOT NULL
      )`);
    // One user per provider account in a store; the same account may sign in to other stores.
    await q.query(`CREATE UNIQUE INDEX "social_identities_provider_key" ON "social_identities" ("storeId", "provider", "providerUserId")`);
    await q.query(`CREATE INDEX "social_identities_user_idx" ON "social_identities" ("storeId", "userId")`);
    await q.query(`
      CREATE TABLE "social_codes" (
        "codeHash" char(64) PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "kind" varchar(16) NOT NULL,
        "payload" jsonb NOT NULL,
        "expiresAt" timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX "social_codes_expires_idx" ON "social_codes" ("expiresAt")`);
    // Single sign-on puts the provider's user id in the session.
    await q.query(`ALTER TABLE "sessions" ADD COLUMN "ssoUserId" varchar(255)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "ssoUserId"`);
    await q.query(`DROP TABLE "social_codes"`);
    await q.query(`DROP TABLE "social_identities"`);
  }
}
