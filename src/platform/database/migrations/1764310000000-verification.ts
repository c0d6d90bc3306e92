import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Verification1764310000000 implements MigrationInterface {
  name = 'Verification1764310000000';

  async up(q: QueryRunner): Promise<void> {
    // Second factors still pending on a session.
    await q.query(`ALTER TABLE "sessions" ADD COLUMN "needsEmail2FA" boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE "sessions" ADD COLUMN "needsMobile2FA" boolean NOT NULL DEFAULT false`);
    // One live code per (store, flow, subject); the subject is the identifier as stored, or the
    // session id for a second factor. Unknown identifiers get a row too (userId null, a hash
    // nothing matches), so every answer and window is the same for them.
    await q.query(`
      CREATE TABLE "verification_codes" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "purpose" varchar(40) NOT NULL,
        "subject" varchar(254) NOT NULL,
        "userId" uuid REFERENCES "users" ("id") ON DELETE CASCADE,
        "sessionId" uuid REFERENCES "sessions" ("id") ON DELETE CASCADE,
        "codeHash" char(64) NOT NULL,
        "codeIndex" integer NOT NULL DEFAULT 1,
        "attempts" integer NOT NULL DEFAULT 0,
        "sentAt" timestamptz NOT NULL,
        "expiresAt" timestamptz NOT NULL,
        "consumedAt" timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX "verification_codes_subject_key" ON "verification_codes" ("storeId", "purpose", "subject")`);
    // Links are completed by their token alone.
    await q.query(`CREATE INDEX "verification_codes_hash_idx" ON "verification_codes" ("codeHash")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "verification_codes"`);
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "needsMobile2FA"`);
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "needsEmail2FA"`);
  }
}
