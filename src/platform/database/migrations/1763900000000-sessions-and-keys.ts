import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SessionsAndKeys1763900000000 implements MigrationInterface {
  name = 'SessionsAndKeys1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "signing_keys" (
        "id" uuid PRIMARY KEY,
        "publicKey" text NOT NULL,
        "privateKey" text NOT NULL,
        "createdAt" timestamptz NOT NULL,
        "signUntil" timestamptz NOT NULL,
        "verifyUntil" timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX "signing_keys_sign_until_idx" ON "signing_keys" ("signUntil")`);

    await q.query(`
      CREATE TABLE "sessions" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "userId" uuid NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
        "createdAt" timestamptz NOT NULL,
        "expiresAt" timestamptz NOT NULL,
        "ip" varchar(64),
        "userAgent" varchar(512)
      )`);
    await q.query(`CREATE INDEX "sessions_store_user_idx" ON "sessions" ("storeId", "userId")`);
    await q.query(`CREATE INDEX "sessions_expires_idx" ON "sessions" ("expiresAt")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "sessions"`);
    await q.query(`DROP TABLE "signing_keys"`);
  }
}
