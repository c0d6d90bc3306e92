import type { MigrationInterface, QueryRunner } from 'typeorm';

// Refresh tokens (settings accessTokenMinutes): stored only as hashes, one row per token a
// session was given; a session's rows go with it.
export class RefreshTokens1764700000000 implements MigrationInterface {
  name = 'RefreshTokens1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "refresh_tokens" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL,
        "userId" uuid NOT NULL,
        "sessionId" uuid NOT NULL REFERENCES "sessions" ("id") ON DELETE CASCADE,
        "tokenHash" varchar(64) NOT NULL,
        "familyKey" varchar(64) NOT NULL,
        "createdAt" timestamptz NOT NULL,
        "expiresAt" timestamptz NOT NULL,
        "spentAt" timestamptz,
        "successorId" uuid
      )`);
    await q.query(`CREATE UNIQUE INDEX "refresh_tokens_hash_idx" ON "refresh_tokens" ("tokenHash")`);
    await q.query(`CREATE INDEX "refresh_tokens_session_idx" ON "refresh_tokens" ("sessionId", "spentAt")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "refresh_tokens"`);
  }
}
