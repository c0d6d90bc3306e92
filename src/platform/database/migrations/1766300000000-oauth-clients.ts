import type { MigrationInterface, QueryRunner } from 'typeorm';

// OAuth clients of the OpenID Connect provider (docs/oidc.md), one store's each.
// - `clientId`: the OAuth `client_id`, unique over every store.
// - `secretHash`: the SHA-256 (hex) of the client secret, for client_secret_basic and
//   client_secret_post clients; null for the others. The secret itself is never stored.
// - `jwks`: the public keys of a private_key_jwt client.
export class OAuthClients1766300000000 implements MigrationInterface {
  name = 'OAuthClients1766300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "oauth_client" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "clientId" varchar(64) NOT NULL,
        "name" varchar(200) NOT NULL,
        "redirectUris" jsonb NOT NULL,
        "postLogoutRedirectUris" jsonb NOT NULL,
        "grantTypes" jsonb NOT NULL,
        "tokenEndpointAuthMethod" varchar(32) NOT NULL,
        "jwks" jsonb,
        "scopes" jsonb NOT NULL,
        "firstParty" boolean NOT NULL DEFAULT false,
        "secretHash" text,
        "createdAt" timestamptz NOT NULL DEFAULT now(),
        "updatedAt" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX "oauth_client_client_id_key" ON "oauth_client" ("clientId")`);
    await q.query(`CREATE INDEX "oauth_client_store_idx" ON "oauth_client" ("storeId", "createdAt")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "oauth_client"`);
  }
}
