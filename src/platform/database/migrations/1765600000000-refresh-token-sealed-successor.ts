import type { MigrationInterface, QueryRunner } from 'typeorm';

// A spent refresh token keeps its successor sealed under a key derived from the spent token
// (ADR 18): a refresh reads, spends and inserts in one statement, without a first lookup of the
// family key.
export class RefreshTokenSealedSuccessor1765600000000 implements MigrationInterface {
  name = 'RefreshTokenSealedSuccessor1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "refresh_tokens" ADD COLUMN "successorSealed" varchar(128)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "refresh_tokens" DROP COLUMN "successorSealed"`);
  }
}
