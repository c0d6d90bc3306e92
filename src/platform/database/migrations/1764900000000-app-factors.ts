import type { MigrationInterface, QueryRunner } from 'typeorm';

// App factors: whether a user has an authenticator app (TOTP) or a passkey, and a session's
// pending TOTP factor.
export class AppFactors1764900000000 implements MigrationInterface {
  name = 'AppFactors1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "users" ADD COLUMN "totpEnabled" boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE "users" ADD COLUMN "hasPasskey" boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE "sessions" ADD COLUMN "needsTotp2FA" boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "needsTotp2FA"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "hasPasskey"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "totpEnabled"`);
  }
}
