import type { MigrationInterface, QueryRunner } from 'typeorm';

// Passkeys (WebAuthn credentials) and the challenges of their ceremonies.
export class Passkeys1765100000000 implements MigrationInterface {
  name = 'Passkeys1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "passkeys" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "userId" uuid NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
        "credentialId" varchar(1400) NOT NULL,
        "publicKey" bytea NOT NULL,
        "counter" bigint NOT NULL DEFAULT 0,
        "transports" text[] NOT NULL DEFAULT '{}',
        "backedUp" boolean NOT NULL DEFAULT false,
        "name" varchar(100) NOT NULL,
        "createdAt" timestamptz NOT NULL,
        "lastUsedAt" timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX "passkeys_credential_key" ON "passkeys" ("credentialId")`);
    await q.query(`CREATE INDEX "passkeys_store_user_idx" ON "passkeys" ("storeId", "userId")`);
    await q.query(`
      CREATE TABLE "passkey_challenges" (
        "challenge" varchar(100) PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "userId" uuid REFERENCES "users" ("id") ON DELETE CASCADE,
        "purpose" varchar(10) NOT NULL,
        "expiresAt" timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX "passkey_challenges_expiry_idx" ON "passkey_challenges" ("expiresAt")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "passkey_challenges"`);
    await q.query(`DROP TABLE "passkeys"`);
  }
}
