import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OidcPayloadEntity } from './oidc-payload.entity.js';

export interface StoredPayload {
  payload: Record<string, unknown>;
  consumedAt: Date | null;
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

  private async first(storeId: string, model: string, now: Date, where: string, value: string): Promise<StoredPayload | undefined> {
    const rows: { payload: Record<string, unknown>; consumedAt: Date | null; expiresAt: Date | null }[] = await this.dataSource.query(
      `SELECT "payload", "consumedAt", "expiresAt" FROM "oidc_payload" WHERE "storeId" = $1 AND "model" = $2 AND ("expiresAt" IS NULL OR "expiresAt" > $3) AND ${where} LIMIT 1`,
      [storeId, model, now, value],
    );
    const row = rows[0];
    return row ? { payload: row.payload, consumedAt: row.consumedAt ? new Date(row.consumedAt) : null } : undefined;
  }
}
