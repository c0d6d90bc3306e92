import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDate, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, Min } from 'class-validator';
import type { AuditCheckpointEntity, AuditEntryEntity } from './audit.entity.js';

// The filters of the list and the export.
export class AuditLogFilterQuery {
  @ApiPropertyOptional({ description: 'An action (`user.login.failed`), or a prefix ending in `.*` (`user.login.*`).' })
  @IsOptional()
  @Matches(/^[a-z0-9]+(\.[a-z0-9]+)*(\.\*)?$/, { message: 'action is a dotted action name, or a prefix ending in .*' })
  @MaxLength(100)
  action?: string;

  @ApiPropertyOptional({ enum: ['success', 'failure'] })
  @IsOptional()
  @IsIn(['success', 'failure'])
  outcome?: 'success' | 'failure';

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(200) actorId?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(200) targetId?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(100) ip?: string;

  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'Entries at or after this instant.' })
  @IsOptional()
  @Type(() => Date)
  @IsDate()
  from?: Date;

  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'Entries at or before this instant.' })
  @IsOptional()
  @Type(() => Date)
  @IsDate()
  to?: Date;
}

export class AuditLogQuery extends AuditLogFilterQuery {
  @ApiPropertyOptional({ description: 'The `nextCursor` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  after?: string;

  @ApiPropertyOptional({ minimum: 1, description: 'Rows per page. Default 20, at most 100 (settings `paging`).' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  pageRowCount?: number;
}

export class AuditExportQuery extends AuditLogFilterQuery {
  @ApiPropertyOptional({ enum: ['ndjson', 'csv'], default: 'ndjson' })
  @IsOptional()
  @IsIn(['ndjson', 'csv'])
  format?: 'ndjson' | 'csv';
}

class AuditActorResponse {
  @ApiProperty({ enum: ['user', 'apiKey', 'machine', 'system', 'anonymous'] }) type: string;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
  @ApiProperty({ type: String, nullable: true }) roleId: string | null;
}

class AuditTargetResponse {
  @ApiProperty() type: string;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
}

export class AuditEntryResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) storeId: string;
  @ApiProperty({ description: 'Place in the store\'s hash chain, from 1.' }) seq: string;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ description: 'See docs/audit-actions.md.' }) action: string;
  @ApiProperty({ enum: ['success', 'failure'] }) outcome: string;
  @ApiProperty({ type: String, nullable: true }) reason: string | null;
  @ApiProperty({ type: AuditActorResponse }) actor: AuditActorResponse;
  @ApiProperty({ type: AuditTargetResponse, nullable: true }) target: AuditTargetResponse | null;
  @ApiProperty({ type: String, nullable: true }) ip: string | null;
  @ApiProperty({ type: String, nullable: true }) userAgent: string | null;
  @ApiProperty({ type: String, nullable: true }) requestId: string | null;
  @ApiProperty({ type: String, nullable: true }) sessionId: string | null;
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true }) details: Record<string, unknown> | null;
  @ApiProperty({ type: String, nullable: true }) prevHash: string | null;
  @ApiProperty({ description: 'HMAC-SHA256 under the chain key `keyId` of `prevHash` and the entry (SHA-256 for an entry without `keyId`).' }) hash: string;
  @ApiProperty({ type: String, nullable: true, description: 'The chain key the hash is keyed with (its id, never the key); null: written before the chain was keyed.' }) keyId: string | null;
}

export class AuditCheckpointResponse {
  @ApiProperty({ format: 'uuid' }) storeId: string;
  @ApiProperty({ description: 'The entry it anchors: its place in the store\'s chain.' }) seq: string;
  @ApiProperty({ description: 'That entry\'s hash when the checkpoint was made.' }) hash: string;
  @ApiProperty({ format: 'date-time', description: 'That entry\'s time.' }) at: string;
  @ApiProperty({ format: 'date-time', description: 'When the checkpoint was made.' }) signedAt: string;
  @ApiProperty({ description: 'A JWS by the service\'s signing key (RS256, header `typ: audit-checkpoint` and `kid`) of `{ storeId, seq, hash, at, iat }`: verify it against `/auth-api/.well-known/jwks.json`.' }) signature: string;
}

export class AuditVerifyResponse {
  @ApiProperty({ type: 'integer', description: 'Entries checked and sound, in chain order, before the first broken one.' }) verified: number;
  @ApiProperty({ type: String, nullable: true, description: 'The first entry whose hash or link does not match, or null.' }) firstBrokenId: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['edited', 'unlinked', 'unknownKey', 'downgraded'],
    description: 'Why that entry is broken: `edited` (its hash does not match it: changed, or made, without the chain key), `unlinked` (it does not follow the entry before: one removed or inserted), `unknownKey` (keyed under a key the service does not hold: see KEY_ENCRYPTION_SECRET_PREVIOUS), `downgraded` (in a weaker form than an entry before it: unkeyed after a keyed one, or under the development key after a secret\'s); null when none is.',
  })
  firstBrokenReason: AuditBrokenReason | null;
  @ApiProperty({ description: 'The newest checkpoint\'s entry is missing, or has another hash: the newest entries were removed or replaced.' }) truncated: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'When truncated: the seq of the newest checkpoint the chain still matches (what follows it was removed or replaced); null when none does, or when not truncated.' }) truncatedAfter: string | null;
  @ApiProperty({ type: AuditCheckpointResponse, nullable: true, description: 'The newest checkpoint the check used, null before the store\'s first (made within a minute of its entries).' }) checkpoint: AuditCheckpointResponse | null;
}

export type AuditBrokenReason = 'edited' | 'unlinked' | 'unknownKey' | 'downgraded';

export function toAuditEntryResponse(e: AuditEntryEntity): AuditEntryResponse {
  return {
    id: e.id,
    storeId: e.storeId,
    seq: String(e.seq),
    at: e.at.toISOString(),
    action: e.action,
    outcome: e.outcome,
    reason: e.reason,
    actor: { type: e.actorType, id: e.actorId, roleId: e.actorRoleId },
    target: e.targetType || e.targetId ? { type: e.targetType ?? '', id: e.targetId } : null,
    ip: e.ip,
    userAgent: e.userAgent,
    requestId: e.requestId,
    sessionId: e.sessionId,
    details: e.details,
    prevHash: e.prevHash,
    hash: e.hash,
    keyId: e.keyId,
  };
}

export function toCheckpointResponse(c: AuditCheckpointEntity): AuditCheckpointResponse {
  return { storeId: c.storeId, seq: String(c.seq), hash: c.hash, at: c.at.toISOString(), signedAt: c.signedAt.toISOString(), signature: c.signature };
}

// The CSV export's columns, in order.
export const CSV_COLUMNS = ['id', 'at', 'action', 'outcome', 'reason', 'actorType', 'actorId', 'actorRoleId', 'targetType', 'targetId', 'ip', 'userAgent', 'requestId', 'sessionId', 'details', 'hash'] as const;

// The header line: quoted as the rows are.
export const CSV_HEADER = CSV_COLUMNS.map(csvField).join(',');

export function toCsvRow(e: AuditEntryEntity): string {
  return CSV_COLUMNS.map((c) => csvField(c === 'at' ? e.at.toISOString() : c === 'details' ? (e.details ? JSON.stringify(e.details) : '') : (e[c] ?? ''))).join(',');
}

// Every field quoted: a spreadsheet whose list separator is `;` (or a tab) would otherwise split
// an unquoted one there and read what follows as a field of its own. A field starting with
// = + - @, a tab or a carriage return would be a formula: a leading ' keeps it text (OWASP's
// CSV injection rule).
export function csvField(value: string): string {
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${text.replaceAll('"', '""')}"`;
}
