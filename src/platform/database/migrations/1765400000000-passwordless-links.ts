import type { MigrationInterface, QueryRunner } from 'typeorm';

// A code row may also carry a link (passwordless sign-in sends both in one message): its token's
// hash, by which the link alone finds the row. Using either spends the row, so both die at once.
export class PasswordlessLinks1765400000000 implements MigrationInterface {
  name = 'PasswordlessLinks1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "verification_codes" ADD COLUMN "linkHash" char(64)`);
    await q.query(`CREATE INDEX "verification_codes_link_idx" ON "verification_codes" ("linkHash") WHERE "linkHash" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "verification_codes_link_idx"`);
    await q.query(`ALTER TABLE "verification_codes" DROP COLUMN "linkHash"`);
  }
}
