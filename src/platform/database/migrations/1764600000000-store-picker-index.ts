import type { MigrationInterface, QueryRunner } from 'typeorm';

// The store picker pages by ("createdAt", id) skipping the SaaS level by codename: with the
// codename in the index, the skipped rows are read from the index alone.
export class StorePickerIndex1764600000000 implements MigrationInterface {
  name = 'StorePickerIndex1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "stores_created_idx"`);
    await q.query(`CREATE INDEX "stores_created_idx" ON "stores" ("createdAt", "id") INCLUDE ("codename")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "stores_created_idx"`);
    await q.query(`CREATE INDEX "stores_created_idx" ON "stores" ("createdAt", "id")`);
  }
}
