import type { MigrationInterface, QueryRunner } from 'typeorm';

// The audit log's `action=user.login.*` filter is a LIKE prefix, which a B-tree of the
// database's collation cannot serve unless it is "C": the count (and the page of a rare prefix)
// read every entry of the table, other stores' included; a list of a prefix matching nothing
// took 230 ms at 1,000,000 entries, 2 ms with this index (docs/performance.md). The same index with the pattern operator class serves
// the prefix as a range and an exact action as before, so it replaces the old one (no extra
// index to write on each entry).
export class AuditLogActionPrefix1765500000000 implements MigrationInterface {
  name = 'AuditLogActionPrefix1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "audit_log_store_action_prefix_idx" ON "audit_log" ("storeId", "action" varchar_pattern_ops, "at")`);
    await q.query(`DROP INDEX "audit_log_store_action_idx"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "audit_log_store_action_idx" ON "audit_log" ("storeId", "action", "at")`);
    await q.query(`DROP INDEX "audit_log_store_action_prefix_idx"`);
  }
}
