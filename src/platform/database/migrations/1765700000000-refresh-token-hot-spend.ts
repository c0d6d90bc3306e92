import type { MigrationInterface, QueryRunner } from 'typeorm';

// Spending a refresh token changes only columns no index holds, so PostgreSQL can update the row
// in place (a HOT update: no new index entries, nothing for vacuum to remove from the indexes):
// the session's index goes by `createdAt` (fixed at insert) instead of `spentAt`, and pages keep
// a fifth free for the spent versions of rows inserted there.
export class RefreshTokenHotSpend1765700000000 implements MigrationInterface {
  name = 'RefreshTokenHotSpend1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "refresh_tokens_session_idx"`);
    await q.query(`CREATE INDEX "refresh_tokens_session_idx" ON "refresh_tokens" ("sessionId", "createdAt")`);
    await q.query(`ALTER TABLE "refresh_tokens" SET (fillfactor = 80)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "refresh_tokens" RESET (fillfactor)`);
    await q.query(`DROP INDEX "refresh_tokens_session_idx"`);
    await q.query(`CREATE INDEX "refresh_tokens_session_idx" ON "refresh_tokens" ("sessionId", "spentAt")`);
  }
}
