import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import { VerificationCodeEntity } from './verification.entity.js';

export interface IssuedCode {
  codeIndex: number;
  sentAt: Date;
  expiresAt: Date;
}

export interface ConsumedCode {
  ok: boolean;
  purpose: string;
  userId: string | null;
  sessionId: string | null;
  subject: string;
}

// By the subject (a code), or by the hash of a link's token: `codeHash` for the flows whose
// secret is a link, `linkHash` for a link sent beside a code (passwordless sign-in).
export type CodeLookup = { subject: string } | { codeHash: string } | { linkHash: string };

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
    code: { purpose: string; subject: string; userId: string | null; sessionId: string | null; codeHash: string; linkHash?: string | null; now: Date; expiresAt: Date; resendBefore: Date },
  ): Promise<IssuedCode | undefined> {
    const result: unknown = await this.dataSource.query(
      `INSERT INTO "verification_codes" ("id", "storeId", "purpose", "subject", "userId", "sessionId", "codeHash", "linkHash", "codeIndex", "attempts", "sentAt", "expiresAt", "consumedAt")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $11, 1, 0, $8, $9, NULL)
       ON CONFLICT ("storeId", "purpose", "subject") DO UPDATE SET
         "userId" = EXCLUDED."userId", "sessionId" = EXCLUDED."sessionId", "codeHash" = EXCLUDED."codeHash", "linkHash" = EXCLUDED."linkHash",
         "codeIndex" = "verification_codes"."codeIndex" + 1, "attempts" = 0,
         "sentAt" = EXCLUDED."sentAt", "expiresAt" = EXCLUDED."expiresAt", "consumedAt" = NULL
       WHERE "verification_codes"."sentAt" <= $10
       RETURNING "codeIndex", "sentAt", "expiresAt"`,
      [randomUUID(), storeId, code.purpose, code.subject, code.userId, code.sessionId, code.codeHash, code.now, code.expiresAt, code.resendBefore, code.linkHash ?? null],
    );
    return rowsOf<IssuedCode>(result)[0];
  }

  // One evaluation of a submitted code: counts an attempt and, when the hash matches, uses the
  // code up. Only a live code (unused, unexpired, under `maxAttempts`) is evaluated at all:
  // undefined otherwise.
  // `purpose`: one flow, or several whose links look alike (a link names no flow).
  async consume(storeId: string, purpose: string | readonly string[], lookup: CodeLookup, codeHash: string, now: Date, maxAttempts: number): Promise<ConsumedCode | undefined> {
    const [column, value] = lookupColumn(lookup);
    // A link's row is found by the hash it is compared with; a code's by its subject.
    const compared = column === 'linkHash' ? 'linkHash' : 'codeHash';
    const result: unknown = await this.dataSource.query(
      `UPDATE "verification_codes"
       SET "attempts" = "attempts" + 1, "consumedAt" = CASE WHEN "${compared}" = $4 THEN $5::timestamptz END
       WHERE "storeId" = $1 AND "purpose" = ANY($2::varchar[]) AND "${column}" = $3
         AND "consumedAt" IS NULL AND "attempts" < $6 AND "expiresAt" > $5
       RETURNING ("consumedAt" IS NOT NULL) AS "ok", "purpose", "userId", "sessionId", "subject"`,
      [storeId, typeof purpose === 'string' ? [purpose] : purpose, value, codeHash, now, maxAttempts],
    );
    return rowsOf<ConsumedCode>(result)[0];
  }

  // The code as it stands, to tell why it was not evaluated.
  find(storeId: string, purpose: string | readonly string[], lookup: CodeLookup): Promise<VerificationCodeEntity | null> {
    return this.dataSource.getRepository(VerificationCodeEntity).findOneBy({ storeId, purpose: typeof purpose === 'string' ? purpose : In([...purpose]), ...lookup });
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

function lookupColumn(lookup: CodeLookup): ['subject' | 'codeHash' | 'linkHash', string] {
  if ('subject' in lookup) return ['subject', lookup.subject];
  if ('linkHash' in lookup) return ['linkHash', lookup.linkHash];
  return ['codeHash', lookup.codeHash];
}
