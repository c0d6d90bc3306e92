import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabasePool } from '../../platform/database/database-pool.js';
import { RefreshTokenEntity } from './refresh-token.entity.js';

const COLUMNS = '"id", "storeId", "userId", "sessionId", "tokenHash", "familyKey", "createdAt", "expiresAt", "spentAt", "successorId", "successorSealed"';

// What `spend` saw and did: the token's row as it stood before the statement (undefined: no such
// token in the store), and whether this statement spent it.
export interface Spending {
  row: RefreshTokenEntity | undefined;
  spent: boolean;
}

// Tenant-level: store id first (`findByHashInAnyStore` serves introspection by a calling service).
// Plain SQL: a refresh is one conditional statement (`spend`). It, the lookup of a token that
// does not name its session, and the insert of a login's first token are named statements
// (DatabasePool.query).
@Injectable()
export class RefreshTokenRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly pool: DatabasePool,
  ) {}

  async insert(row: RefreshTokenEntity): Promise<void> {
    await this.pool.query('refresh-token-insert', `INSERT INTO "refresh_tokens" (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, [
      row.id, row.storeId, row.userId, row.sessionId, row.tokenHash, row.familyKey, row.createdAt, row.expiresAt, row.spentAt, row.successorId, row.successorSealed,
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

  // Reads the token by its hash and, in the same statement, spends it if it is unspent, unexpired
  // at `now` and belongs to `owner` (the session and user the caller named and found live),
  // inserting its successor; `successorSealed` goes in the spent row. Of two concurrent spends of
  // one token (two replicas included) exactly one spends: the other sees the row unspent but
  // `spent` false. Tokens of the same session spent before `forgetBefore` are deleted on the way
  // (found through the session's index by `createdAt`, never later than `spentAt`: the spend
  // itself touches no indexed column, see migration 1765700000000).
  async spend(
    storeId: string,
    tokenHash: string,
    owner: { sessionId: string; userId: string },
    successor: { id: string; tokenHash: string; sealed: string },
    now: Date,
    forgetBefore: Date,
  ): Promise<Spending> {
    const rows = await this.pool.query<RefreshTokenEntity & { spent: boolean }>(
      'refresh-token-spend',
      `WITH found AS (
         SELECT ${COLUMNS} FROM "refresh_tokens" WHERE "storeId" = $1 AND "tokenHash" = $2
       ), spent AS (
         UPDATE "refresh_tokens" SET "spentAt" = $3, "successorId" = $4, "successorSealed" = $6
         WHERE "storeId" = $1 AND "tokenHash" = $2 AND "spentAt" IS NULL AND "expiresAt" > $3 AND "sessionId" = $7 AND "userId" = $8
         RETURNING "storeId", "userId", "sessionId", "familyKey", "expiresAt"
       ), forgotten AS (
         DELETE FROM "refresh_tokens" WHERE "storeId" = $1 AND "sessionId" = (SELECT "sessionId" FROM spent) AND "createdAt" < $9 AND "spentAt" < $9
       ), inserted AS (
         INSERT INTO "refresh_tokens" ("id", "storeId", "userId", "sessionId", "tokenHash", "familyKey", "createdAt", "expiresAt")
         SELECT $4, "storeId", "userId", "sessionId", $5, "familyKey", $3, "expiresAt" FROM spent
         RETURNING "id"
       )
       SELECT found.*, EXISTS (SELECT 1 FROM inserted) AS "spent" FROM found`,
      [storeId, tokenHash, now, successor.id, successor.tokenHash, successor.sealed, owner.sessionId, owner.userId, forgetBefore],
    );
    if (!rows[0]) return { row: undefined, spent: false };
    const { spent, ...row } = rows[0];
    return { row, spent };
  }

  // The session's tokens not yet spent are dropped (a second factor completed: a new one follows).
  async deleteUnspent(storeId: string, sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "refresh_tokens" WHERE "storeId" = $1 AND "sessionId" = $2 AND "spentAt" IS NULL`, [storeId, sessionId]);
  }
}
