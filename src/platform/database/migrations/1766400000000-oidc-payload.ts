import type { MigrationInterface, QueryRunner } from 'typeorm';

// What the OpenID Connect provider keeps between requests, per store (docs/oidc.md).
export class OidcPayload1766400000000 implements MigrationInterface {
  name = 'OidcPayload1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "oidc_payload" (
      "id" text NOT NULL,
      "model" text NOT NULL,
      "storeId" uuid NOT NULL,
      "payload" jsonb NOT NULL,
      "grantId" text NULL,
      "userCode" text NULL,
      "uid" text NULL,
      "expiresAt" timestamptz NULL,
      "consumedAt" timestamptz NULL,
      CONSTRAINT "oidc_payload_pkey" PRIMARY KEY ("model", "id")
    )`);
    await q.query(`CREATE INDEX "oidc_payload_grant_idx" ON "oidc_payload" ("storeId", "grantId")`);
    await q.query(`CREATE INDEX "oidc_payload_uid_idx" ON "oidc_payload" ("uid")`);
    await q.query(`CREATE INDEX "oidc_payload_expires_idx" ON "oidc_payload" ("expiresAt")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "oidc_payload"`);
  }
}
