import type { MigrationInterface, QueryRunner } from 'typeorm';

// When a session was last used, so a person can tell a live device from a forgotten one. Null
// until its first request after the login (lists show the creation time then).
export class DeviceSessions1764800000000 implements MigrationInterface {
  name = 'DeviceSessions1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sessions" ADD COLUMN "lastSeenAt" timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sessions" DROP COLUMN "lastSeenAt"`);
  }
}
