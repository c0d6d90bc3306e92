import type { MigrationInterface, QueryRunner } from 'svc-auth/extension';

// Runs at boot with the service's migrations, in the order of the timestamps, under one lock.
export class SupportTickets1766100000000 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE support_ticket (
        id uuid PRIMARY KEY,
        "storeId" uuid NOT NULL,
        "ownerId" uuid NOT NULL,
        subject varchar(200) NOT NULL,
        status varchar(10) NOT NULL,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        "closedAt" timestamptz
      )`);
    await q.query('CREATE INDEX support_ticket_store_owner ON support_ticket ("storeId", "ownerId", status)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE support_ticket');
  }
}
