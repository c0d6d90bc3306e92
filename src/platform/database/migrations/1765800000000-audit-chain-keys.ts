import type { MigrationInterface, QueryRunner } from 'typeorm';

// The audit chain keyed and anchored (docs/audit-log.md, ADR 19):
// - `audit_log.keyId`: the key an entry's hash is an HMAC under; null for the entries written
//   before, plain SHA-256 (a column without a default: no table rewrite).
// - `audit_checkpoint`: signed heads of each store's chain, so that removing the newest entries
//   shows.
// - `audit_chain_head(store)`: takes the store's chain lock and reads its last entry in one
//   statement. VOLATILE, so the read takes its snapshot after the lock is granted (READ
//   COMMITTED): a read in the statement that waited would miss the entry of the writer it waited
//   for. The lock's keys are those the earlier release took, so replicas of both exclude each other.
export class AuditChainKeys1765800000000 implements MigrationInterface {
  name = 'AuditChainKeys1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "audit_log" ADD COLUMN "keyId" varchar(16)`);
    await q.query(`
      CREATE TABLE "audit_checkpoint" (
        "storeId" uuid NOT NULL,
        "seq" bigint NOT NULL,
        "hash" char(64) NOT NULL,
        "at" timestamptz NOT NULL,
        "signedAt" timestamptz NOT NULL,
        "keyId" varchar(16) NOT NULL,
        "mac" char(64) NOT NULL,
        "signature" text NOT NULL,
        PRIMARY KEY ("storeId", "seq")
      )`);
    await q.query(`CREATE INDEX "audit_checkpoint_at_idx" ON "audit_checkpoint" ("at")`);
    await q.query(`
      CREATE FUNCTION "audit_chain_head"("store" text) RETURNS TABLE ("lastSeq" bigint, "lastHash" char(64))
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(1096107092, hashtext("store")); -- 0x41554454, "AUDT"
        RETURN QUERY SELECT a."seq", a."hash" FROM "audit_log" a WHERE a."storeId" = "store"::uuid ORDER BY a."seq" DESC LIMIT 1;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "audit_chain_head"(text)`);
    await q.query(`DROP TABLE "audit_checkpoint"`);
    await q.query(`ALTER TABLE "audit_log" DROP COLUMN "keyId"`);
  }
}
