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

interface PendingSpend {
  values: unknown[];
  resolve: (spending: Spending) => void;
  reject: (error: unknown) => void;
}

// The most spends one statement carries; a turn with more sends several.
const SPEND_BATCH = 8;
const INPUT_COLUMNS = '"n", "storeId", "tokenHash", "now", "successorId", "successorHash", "sealed", "sessionId", "userId", "forgetBefore"';
const INPUT_TYPES = ['int', 'uuid', 'varchar', 'timestamptz', 'uuid', 'varchar', 'varchar', 'uuid', 'uuid', 'timestamptz'];

// The statement spending `count` tokens, each input row numbered `n` (its place in the batch).
// When two rows name one token, the UPDATE spends it for one of them only. Every value is the
// service's own (a hash, a session id read from the token's fixed format, ids it drew), so no
// request can make the statement fail for the others in it.
function spendStatement(count: number): string {
  const rows = Array.from({ length: count }, (_, r) => `(${INPUT_TYPES.map((type, c) => `$${r * INPUT_TYPES.length + c + 1}::${type}`).join(', ')})`);
  return `WITH input (${INPUT_COLUMNS}) AS (
       VALUES ${rows.join(', ')}
     ), found AS (
       SELECT i."n", ${COLUMNS.split(', ').map((c) => `r.${c}`).join(', ')} FROM input i JOIN "refresh_tokens" r ON r."storeId" = i."storeId" AND r."tokenHash" = i."tokenHash"
     ), spent AS (
       UPDATE "refresh_tokens" r SET "spentAt" = i."now", "successorId" = i."successorId", "successorSealed" = i."sealed"
       FROM input i
       WHERE r."storeId" = i."storeId" AND r."tokenHash" = i."tokenHash" AND r."spentAt" IS NULL AND r."expiresAt" > i."now" AND r."sessionId" = i."sessionId" AND r."userId" = i."userId"
       RETURNING i."n", r."storeId", r."userId", r."sessionId", r."familyKey", r."expiresAt", i."successorId", i."successorHash", i."now", i."forgetBefore"
     ), forgotten AS (
       DELETE FROM "refresh_tokens" r USING spent s
       WHERE r."storeId" = s."storeId" AND r."sessionId" = s."sessionId" AND r."createdAt" < s."forgetBefore" AND r."spentAt" < s."forgetBefore"
     ), inserted AS (
       INSERT INTO "refresh_tokens" ("id", "storeId", "userId", "sessionId", "tokenHash", "familyKey", "createdAt", "expiresAt")
       SELECT "successorId", "storeId", "userId", "sessionId", "successorHash", "familyKey", "now", "expiresAt" FROM spent
     )
     SELECT found.*, EXISTS (SELECT 1 FROM spent WHERE spent."n" = found."n") AS "spent" FROM found`;
}

// SPEND_STATEMENTS[count - 1] spends `count` tokens.
const SPEND_STATEMENTS = Array.from({ length: SPEND_BATCH }, (_, i) => spendStatement(i + 1));

// Tenant-level: store id first (`findByHashInAnyStore` serves introspection by a calling service).
// Plain SQL: a refresh is one conditional statement (`spend`), shared by the refreshes of one
// event-loop turn. It, the lookup of a token that does not name its session, and the insert of a
// login's first token are named statements (DatabasePool.query).
@Injectable()
export class RefreshTokenRepository {
  private pendingSpends: PendingSpend[] = [];

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
  // one token (two replicas, or two in one statement, included) exactly one spends: the other
  // sees the row unspent but `spent` false. Tokens of the same session spent before
  // `forgetBefore` are deleted on the way (found through the session's index by `createdAt`,
  // never later than `spentAt`: the spend itself touches no indexed column, see migration
  // 1765700000000). The spends asked in one event-loop turn go as one statement (up to
  // SPEND_BATCH): one round trip and one commit for all of them.
  spend(
    storeId: string,
    tokenHash: string,
    owner: { sessionId: string; userId: string },
    successor: { id: string; tokenHash: string; sealed: string },
    now: Date,
    forgetBefore: Date,
  ): Promise<Spending> {
    return new Promise((resolve, reject) => {
      const spend: PendingSpend = { values: [storeId, tokenHash, now, successor.id, successor.tokenHash, successor.sealed, owner.sessionId, owner.userId, forgetBefore], resolve, reject };
      if (this.pendingSpends.push(spend) === 1) setImmediate(() => this.spendPending());
    });
  }

  private spendPending(): void {
    const pending = this.pendingSpends;
    this.pendingSpends = [];
    for (let i = 0; i < pending.length; i += SPEND_BATCH) void this.spendBatch(pending.slice(i, i + SPEND_BATCH));
  }

  private async spendBatch(batch: PendingSpend[]): Promise<void> {
    try {
      const rows = await this.pool.query<RefreshTokenEntity & { n: number; spent: boolean }>(`refresh-token-spend-${batch.length}`, SPEND_STATEMENTS[batch.length - 1], batch.flatMap((s, n) => [n, ...s.values]));
      const byInput = new Map(rows.map(({ n, spent, ...row }) => [n, { row, spent }]));
      batch.forEach((s, n) => s.resolve(byInput.get(n) ?? { row: undefined, spent: false }));
    } catch (error) {
      for (const s of batch) s.reject(error);
    }
  }

  // The session's tokens not yet spent are dropped (a second factor completed: a new one follows).
  async deleteUnspent(storeId: string, sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "refresh_tokens" WHERE "storeId" = $1 AND "sessionId" = $2 AND "spentAt" IS NULL`, [storeId, sessionId]);
  }
}
