import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabasePool } from '../../platform/database/database-pool.js';
import { RefreshTokenEntity } from './refresh-token.entity.js';

const COLUMNS = '"id", "storeId", "userId", "sessionId", "tokenHash", "familyKey", "createdAt", "expiresAt", "spentAt", "successorId"';

// Tenant-level: store id first (`findByHashInAnyStore` serves introspection by a calling service).
// Plain SQL: a refresh is two statements, and the rotation must be one conditional statement.
// Those two, and the insert of a login's first token, are named statements (DatabasePool.query).
@Injectable()
export class RefreshTokenRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly pool: DatabasePool,
  ) {}

  async insert(row: RefreshTokenEntity): Promise<void> {
    await this.pool.query('refresh-token-insert', `INSERT INTO "refresh_tokens" (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [
      row.id, row.storeId, row.userId, row.sessionId, row.tokenHash, row.familyKey, row.createdAt, row.expiresAt, row.spentAt, row.successorId,
    ]);
  }

  async findByHash(storeId: string, tokenHash: string): Promise<RefreshTokenEntity | undefined> {
    const rows = await this.pool.query<RefreshTokenEntity>('refresh-token-by-hash', `SELECT ${COLUMNS} FROM "refresh_tokens" WHERE "storeId" = $1 AND "tokenHash" = $2`, [storeId, tokenHash]);
    return rows[0];
  }

  async findByHashInAnyStore(tokenHash: string): Promise<RefreshTokenEntity | undefined> {
    const rows: RefreshTokenEntity[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM "refresh_tokens" WHERE "tokenHash" = $1`, [tokenHash]);
    return rows[0];
  }

  async findById(storeId: string, id: string): Promise<RefreshTokenEntity | undefined> {
    const rows: RefreshTokenEntity[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM "refresh_tokens" WHERE "storeId" = $1 AND "id" = $2`, [storeId, id]);
    return rows[0];
  }

  // Spends `id` and inserts its successor in one statement, only if `id` was not spent yet: of
  // two concurrent rotations (two replicas included) exactly one gets true. Tokens of the same
  // session spent before `forgetBefore` are deleted on the way.
  async rotate(storeId: string, id: string, successor: { id: string; tokenHash: string; createdAt: Date }, forgetBefore: Date): Promise<boolean> {
    const rows = await this.pool.query(
      'refresh-token-rotate',
      `WITH spent AS (
         UPDATE "refresh_tokens" SET "spentAt" = $3, "successorId" = $4
         WHERE "storeId" = $1 AND "id" = $2 AND "spentAt" IS NULL
         RETURNING "storeId", "userId", "sessionId", "familyKey", "expiresAt"
       ), forgotten AS (
         DELETE FROM "refresh_tokens" WHERE "storeId" = $1 AND "sessionId" = (SELECT "sessionId" FROM spent) AND "spentAt" < $6
       )
       INSERT INTO "refresh_tokens" ("id", "storeId", "userId", "sessionId", "tokenHash", "familyKey", "createdAt", "expiresAt")
       SELECT $4, "storeId", "userId", "sessionId", $5, "familyKey", $3, "expiresAt" FROM spent
       RETURNING "id"`,
      [storeId, id, successor.createdAt, successor.id, successor.tokenHash, forgetBefore],
    );
    return rows.length === 1;
  }

  // The session's tokens not yet spent are dropped (a second factor completed: a new one follows).
  async deleteUnspent(storeId: string, sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "refresh_tokens" WHERE "storeId" = $1 AND "sessionId" = $2 AND "spentAt" IS NULL`, [storeId, sessionId]);
  }
}
