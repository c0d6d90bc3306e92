import type { MigrationInterface, QueryRunner } from 'typeorm';

// What a sign-in proved: the methods (`amr`, RFC 8176 names), when its last factor was proved
// (`authTime`), and a pending passkey factor beside the authenticator app's. Sessions begun
// before keep an empty list: their tokens claim no method rather than a guessed one.
export class SessionAssurance1765900000000 implements MigrationInterface {
  name = 'SessionAssurance1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sessions" ADD "amr" text array NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE "sessions" ADD "authTime" TIMESTAMP WITH TIME ZONE`);
    await q.query(`ALTER TABLE "sessions" ADD "needsPasskey2FA" boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "needsPasskey2FA"`);
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "authTime"`);
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "amr"`);
  }
}
