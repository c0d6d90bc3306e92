import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { VerificationCodeEntity } from './verification.entity.js';

export interface IssuedCode {
  codeIndex: number;
  sentAt: Date;
  expiresAt: Date;
}

export interface ConsumedCode {
  ok: boolean;
  userId: string | null;
  sessionId: string | null;
  subject: string;
}

export type CodeLookup = { subject: string } | { codeHash: string };

// UPDATE ... RETURNING answers [rows, count] through TypeORM's postgres driver; INSERT answers rows.
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

// Tenant-level: store id first. Every decision about a code is one statement, so concurrent
// requests on any replica cannot both pass a check that only one may pass.
@Injectable()
export class VerificationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  // A new code for the subject, unless the last one was sent after `resendBefore`: then
  // undefined. A new code replaces the old one (its attempts and use start again).
  async issue(
    storeId: string,
    code: { purpose: string; subject: string; userId: string | null; sessionId: string | null; codeHash: string; now: Date; expiresAt: Date; resendBefore: Date },
  ): Promise<IssuedCode | undefined> {
    const result: unknown = await this.dataSource.query(
      `INSERT INTO "verification_codes" ("id", "storeId", "purpose", "subject", "userId", "sessionId", "codeHash", "codeIndex", "attempts", "sentAt", "expiresAt", "consumedAt")
       VALUES ($1, $2, $3, $4, $5, $6, $7, 1, 0, $8, $9, NULL)
       ON CONFLICT ("storeId", "purpose", "subject") DO UPDATE SET
         "userId" = EXCLUDED."userId", "sessionId" = EXCLUDED."sessionId", "codeHash" = EXCLUDED."codeHash",
         "codeIndex" = "verification_codes"."codeIndex" + 1, "attempts" = 0,
         "sentAt" = EXCLUDED."sentAt", "expiresAt" = EXCLUDED."expiresAt", "consumedAt" = NULL
       WHERE "verification_codes"."sentAt" <= $10
       RETURNING "codeIndex", "sentAt", "expiresAt"`,
      [randomUUID(), storeId, code.purpose, code.subject, code.userId, code.sessionId, code.codeHash, code.now, code.expiresAt, code.resendBefore],
    );
    return rowsOf<IssuedCode>(result)[0];
  }

  // One evaluation of a submitted code: counts an attempt and, when the hash matches, uses the
  // code up. Only a live code (unused, unexpired, under `maxAttempts`) is evaluated at all:
  // undefined otherwise.
  async consume(storeId: string, purpose: string, lookup: CodeLookup, codeHash: string, now: Date, maxAttempts: number): Promise<ConsumedCode | undefined> {
    const [column, value] = 'subject' in lookup ? ['subject', lookup.subject] : ['codeHash', lookup.codeHash];
    const result: unknown = await this.dataSource.query(
      `UPDATE "verification_codes"
       SET "attempts" = "attempts" + 1, "consumedAt" = CASE WHEN "codeHash" = $4 THEN $5::timestamptz END
       WHERE "storeId" = $1 AND "purpose" = $2 AND "${column}" = $3
         AND "consumedAt" IS NULL AND "attempts" < $6 AND "expiresAt" > $5
       RETURNING ("consumedAt" IS NOT NULL) AS "ok", "userId", "sessionId", "subject"`,
      [storeId, purpose, value, codeHash, now, maxAttempts],
    );
    return rowsOf<ConsumedCode>(result)[0];
  }

  // The code as it stands, to tell why it was not evaluated.
  find(storeId: string, purpose: string, lookup: CodeLookup): Promise<VerificationCodeEntity | null> {
    return this.dataSource.getRepository(VerificationCodeEntity).findOneBy({ storeId, purpose, ...lookup });
  }

  // Across stores: housekeeping, not a tenant-level read.
  async purgeExpired(before: Date): Promise<void> {
    await this.dataSource.query(`DELETE FROM "verification_codes" WHERE "expiresAt" < $1`, [before]);
  }

  // When the subject's last code was sent (for Retry-After).
  async lastSent(storeId: string, purpose: string, subject: string): Promise<Date | undefined> {
    return (await this.find(storeId, purpose, { subject }))?.sentAt;
  }
}
