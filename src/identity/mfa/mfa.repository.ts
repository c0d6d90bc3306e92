import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { TotpFactorEntity } from './mfa.entity.js';

// UPDATE and DELETE ... RETURNING answer [rows, count] through TypeORM's postgres driver; INSERT
// answers rows.
function rowsOf(result: unknown): unknown[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as unknown[];
}

const TOTP_COLUMNS = '"userId", "storeId", "secret", "createdAt", "confirmedAt", "lastUsedStep"';

// Tenant-level: store id first, and in every query. Plain SQL: acceptance of a code and use of a
// recovery code are each one conditional statement, so two replicas never both accept one.
@Injectable()
export class MfaRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findTotp(storeId: string, userId: string): Promise<TotpFactorEntity | undefined> {
    const rows: TotpFactorEntity[] = await this.dataSource.query(`SELECT ${TOTP_COLUMNS} FROM "totp_factors" WHERE "storeId" = $1 AND "userId" = $2`, [storeId, userId]);
    return rows[0];
  }

  // A new pending setup replaces an earlier pending one, never a confirmed one: false then.
  async startTotp(storeId: string, userId: string, secret: string, now: Date): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO "totp_factors" ("userId", "storeId", "secret", "createdAt", "confirmedAt", "lastUsedStep")
       VALUES ($2, $1, $3, $4, NULL, -1)
       ON CONFLICT ("userId") DO UPDATE SET "secret" = EXCLUDED."secret", "createdAt" = EXCLUDED."createdAt", "lastUsedStep" = -1
       WHERE "totp_factors"."confirmedAt" IS NULL AND "totp_factors"."storeId" = $1
       RETURNING "userId"`,
      [storeId, userId, secret, now],
    );
    return rowsOf(rows).length === 1;
  }

  // Accepts the code of time step `step` only if no code of this step or a later one was
  // accepted before (`confirmed`: the factor's state it must be in; a pending setup becomes
  // confirmed by its first code), and only for the secret the code was checked against (a
  // setup started again meanwhile replaced it).
  async acceptStep(storeId: string, userId: string, secret: string, step: number, confirmed: boolean, now: Date): Promise<boolean> {
    const rows: unknown = await this.dataSource.query(
      `UPDATE "totp_factors" SET "lastUsedStep" = $3, "confirmedAt" = COALESCE("confirmedAt", $5)
       WHERE "storeId" = $1 AND "userId" = $2 AND "lastUsedStep" < $3 AND ("confirmedAt" IS NOT NULL) = $4 AND "secret" = $6
       RETURNING "userId"`,
      [storeId, userId, step, confirmed, now, secret],
    );
    return rowsOf(rows).length === 1;
  }

  // A page of every store's app secrets, by user id after `afterUserId` (a secret sealed again
  // during a KEY_ENCRYPTION_SECRET rotation). SaaS-level: the rotation is the deployment's.
  pageSecrets(afterUserId: string, limit: number): Promise<{ storeId: string; userId: string; secret: string }[]> {
    return this.dataSource.query(`SELECT "storeId", "userId", "secret" FROM "totp_factors" WHERE "userId" > $1 ORDER BY "userId" LIMIT $2`, [afterUserId, limit]);
  }

  // Whether the secret was still `sealed` and now is `resealed`.
  async reseal(storeId: string, userId: string, sealed: string, resealed: string): Promise<boolean> {
    const rows: unknown = await this.dataSource.query(`UPDATE "totp_factors" SET "secret" = $4 WHERE "storeId" = $1 AND "userId" = $2 AND "secret" = $3 RETURNING "userId"`, [storeId, userId, sealed, resealed]);
    return rowsOf(rows).length === 1;
  }

  async deleteTotp(storeId: string, userId: string, tx?: Tx): Promise<void> {
    await managerOf(this.dataSource, tx).query(`DELETE FROM "totp_factors" WHERE "storeId" = $1 AND "userId" = $2`, [storeId, userId]);
  }

  // The user's codes replaced by these, in one statement.
  async replaceRecoveryCodes(storeId: string, userId: string, rows: { id: string; codeHash: string }[], now: Date, tx?: Tx): Promise<void> {
    await managerOf(this.dataSource, tx).query(
      `WITH gone AS (DELETE FROM "recovery_codes" WHERE "storeId" = $1 AND "userId" = $2)
       INSERT INTO "recovery_codes" ("id", "storeId", "userId", "codeHash", "createdAt")
       SELECT id, $1, $2, hash, $5 FROM unnest($3::uuid[], $4::varchar[]) AS c(id, hash)`,
      [storeId, userId, rows.map((r) => r.id), rows.map((r) => r.codeHash), now],
    );
  }

  // Uses a recovery code up: true for exactly one of any number of concurrent uses.
  // One code, whichever of its hashes (`codeHashes`: under the current secret and the previous
  // one) it was stored with.
  async useRecoveryCode(storeId: string, userId: string, codeHashes: string[]): Promise<boolean> {
    const rows: unknown = await this.dataSource.query(
      `DELETE FROM "recovery_codes" WHERE "id" = (SELECT "id" FROM "recovery_codes" WHERE "storeId" = $1 AND "userId" = $2 AND "codeHash" = ANY($3) LIMIT 1) RETURNING "id"`,
      [storeId, userId, codeHashes],
    );
    return rowsOf(rows).length === 1;
  }

  async countRecoveryCodes(storeId: string, userId: string): Promise<number> {
    const rows: { n: number }[] = await this.dataSource.query(`SELECT count(*)::int AS n FROM "recovery_codes" WHERE "storeId" = $1 AND "userId" = $2`, [storeId, userId]);
    return rows[0]?.n ?? 0;
  }

  async deleteRecoveryCodes(storeId: string, userId: string, tx?: Tx): Promise<void> {
    await managerOf(this.dataSource, tx).query(`DELETE FROM "recovery_codes" WHERE "storeId" = $1 AND "userId" = $2`, [storeId, userId]);
  }
}
