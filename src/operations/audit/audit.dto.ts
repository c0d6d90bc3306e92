import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDate, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, Min } from 'class-validator';
import type { AuditEntryEntity } from './audit.entity.js';

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
  @ApiProperty() hash: string;
}

export class AuditVerifyResponse {
  @ApiProperty({ type: 'integer', description: 'Entries checked and sound, in chain order, before the first broken one.' }) verified: number;
  @ApiProperty({ type: String, nullable: true, description: 'The first entry whose hash or link does not match, or null.' }) firstBrokenId: string | null;
}

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
  };
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
