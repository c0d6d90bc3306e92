import type { MigrationInterface, QueryRunner } from 'typeorm';

// Every change of a store row, whoever makes it (the service, an operator's SQL), is announced
// on the channel `store_changed` with the store's id: each replica's store cache forgets it.
export class StoreChanges1764500000000 implements MigrationInterface {
  name = 'StoreChanges1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "store_changed_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('store_changed', COALESCE(NEW."id", OLD."id")::text);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "store_changed" AFTER UPDATE OR DELETE ON "stores" FOR EACH ROW EXECUTE FUNCTION "store_changed_notify"()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "store_changed" ON "stores"`);
    await q.query(`DROP FUNCTION "store_changed_notify"()`);
  }
}
