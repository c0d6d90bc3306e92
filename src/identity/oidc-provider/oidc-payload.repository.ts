import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { OidcPayloadEntity } from './oidc-payload.entity.js';

export interface StoredPayload {
  payload: Record<string, unknown>;
  consumedAt: Date | null;
}

// A user's live grant (a remembered consent), as the provider stored it.
export interface StoredGrant {
  id: string;
  payload: { clientId?: string; iat?: number; openid?: { scope?: string } } & Record<string, unknown>;
}

export interface PayloadRow {
  grantId?: string | null;
  userCode?: string | null;
  uid?: string | null;
  expiresAt: Date | null;
}

// Every method takes the store first: a row of one store is never found from another's
// provider. Expired rows count as missing.
@Injectable()
export class OidcPayloadRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(OidcPayloadEntity);
  }

  async upsert(storeId: string, model: string, id: string, payload: Record<string, unknown>, row: PayloadRow): Promise<void> {
    // The key is (model, id): a row of another store with the same key is left alone (the
    // update's condition fails) rather than taken over.
    await this.dataSource.query(
      `INSERT INTO "oidc_payload" ("model", "id", "storeId", "payload", "grantId", "userCode", "uid", "expiresAt", "consumedAt")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)
       ON CONFLICT ("model", "id") DO UPDATE SET "payload" = EXCLUDED."payload", "grantId" = EXCLUDED."grantId", "userCode" = EXCLUDED."userCode",
         "uid" = EXCLUDED."uid", "expiresAt" = EXCLUDED."expiresAt"
       WHERE "oidc_payload"."storeId" = EXCLUDED."storeId"`,
      [model, id, storeId, JSON.stringify(payload), row.grantId ?? null, row.userCode ?? null, row.uid ?? null, row.expiresAt],
    );
  }

  find(storeId: string, model: string, id: string, now: Date): Promise<StoredPayload | undefined> {
    return this.first(storeId, model, now, `"id" = $4`, id);
  }

  findByUid(storeId: string, model: string, uid: string, now: Date): Promise<StoredPayload | undefined> {
    return this.first(storeId, model, now, `"uid" = $4`, uid);
  }

  findByUserCode(storeId: string, model: string, userCode: string, now: Date): Promise<StoredPayload | undefined> {
    return this.first(storeId, model, now, `"userCode" = $4`, userCode);
  }

  async consume(storeId: string, model: string, id: string, at: Date): Promise<void> {
    await this.repo.update({ storeId, model, id }, { consumedAt: at });
  }

  async destroy(storeId: string, model: string, id: string): Promise<void> {
    await this.repo.delete({ storeId, model, id });
  }

  // Every artifact of a grant, whatever its model (codes, access and refresh tokens).
  async revokeByGrantId(storeId: string, grantId: string): Promise<void> {
    await this.repo.delete({ storeId, grantId });
  }

  // The user's live grants in the store (oidc-provider's `Grant` model), newest first.
  async listGrants(storeId: string, accountId: string, now: Date, page: PageRequest): Promise<[StoredGrant[], number]> {
    const where = `"storeId" = $1 AND "model" = 'Grant' AND "payload"->>'accountId' = $2 AND ("expiresAt" IS NULL OR "expiresAt" > $3)`;
    const rows: StoredGrant[] = await this.dataSource.query(
      `SELECT "id", "payload" FROM "oidc_payload" WHERE ${where} ORDER BY ("payload"->>'iat')::bigint DESC NULLS LAST, "id" LIMIT $4 OFFSET $5`,
      [storeId, accountId, now, page.pageRowCount, page.offset],
    );
    const [{ n }]: { n: number }[] = await this.dataSource.query(`SELECT count(*)::int AS "n" FROM "oidc_payload" WHERE ${where}`, [storeId, accountId, now]);
    return [rows, n];
  }

  // One live grant of the user in the store.
  async findGrant(storeId: string, accountId: string, grantId: string, now: Date, tx?: Tx): Promise<StoredGrant | undefined> {
    const rows: StoredGrant[] = await managerOf(this.dataSource, tx).query(
      `SELECT "id", "payload" FROM "oidc_payload" WHERE "storeId" = $1 AND "model" = 'Grant' AND "id" = $2 AND "payload"->>'accountId' = $3 AND ("expiresAt" IS NULL OR "expiresAt" > $4)`,
      [storeId, grantId, accountId, now],
    );
    return rows[0];
  }

  // A grant and everything issued under it (codes, access and refresh tokens) in one statement:
  // what the provider's `Grant.destroy` and the adapter's `revokeByGrantId` remove.
  async revokeGrant(storeId: string, grantId: string, tx?: Tx): Promise<void> {
    await managerOf(this.dataSource, tx).query(`DELETE FROM "oidc_payload" WHERE "storeId" = $1 AND (("model" = 'Grant' AND "id" = $2) OR "grantId" = $2)`, [storeId, grantId]);
  }

  // Deletes up to `batch` rows expired before `now` (every store's); how many went. SKIP LOCKED:
  // replicas sweeping at once take different rows, none waits for another.
  async deleteExpired(now: Date, batch: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      `WITH "gone" AS (
        DELETE FROM "oidc_payload" WHERE ("model", "id") IN (SELECT "model", "id" FROM "oidc_payload" WHERE "expiresAt" < $1 LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING 1
      ) SELECT count(*)::int AS "n" FROM "gone"`,
      [now, batch],
    )) as { n: number }[];
    return row.n;
  }

  private async first(storeId: string, model: string, now: Date, where: string, value: string): Promise<StoredPayload | undefined> {
    const rows: { payload: Record<string, unknown>; consumedAt: Date | null; expiresAt: Date | null }[] = await this.dataSource.query(
      `SELECT "payload", "consumedAt", "expiresAt" FROM "oidc_payload" WHERE "storeId" = $1 AND "model" = $2 AND ("expiresAt" IS NULL OR "expiresAt" > $3) AND ${where} LIMIT 1`,
      [storeId, model, now, value],
    );
    const row = rows[0];
    return row ? { payload: row.payload, consumedAt: row.consumedAt ? new Date(row.consumedAt) : null } : undefined;
  }
}
