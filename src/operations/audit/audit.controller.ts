import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiResult } from '../../kernel/api-result.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { AppError } from '../../kernel/errors.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type RequestContext } from '../../kernel/request-context.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { P } from '../../kernel/service-permissions.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { AuditEntryResponse, AuditExportQuery, AuditLogQuery, AuditVerifyResponse, CSV_HEADER, toAuditEntryResponse, toCheckpointResponse, toCsvRow, type AuditLogFilterQuery } from './audit.dto.js';
import type { AuditFilter, AuditPosition } from './audit.repository.js';
import { AuditQueryService } from './audit-query.service.js';
import { AuditVerificationService } from './audit-verification.service.js';
import { PagingSection } from '../../kernel/paging.settings.js';

const EXPORT_PAGE = 500;

// The store is always the request's (its own for an administrator; any targeted one for a
// super or SaaS administrator, as the guard decides): nothing a caller sends, cursor included, names it.
@ApiTags('audit log')
@Controller('auth-api')
export class AuditController {
  constructor(
    private readonly audit: AuditQueryService,
    private readonly chain: AuditVerificationService,
    private readonly config: AppConfig,
  ) {}

  @Get('v1/auditlogs')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.auditLogRead, saasAdminTargetsAnyStore: true })
  @Envelope({ dataName: 'auditLogs', action: 'list' })
  @ApiOperation({ summary: 'The targeted store\'s audit entries, newest first, filtered; pages follow `nextCursor` (`after=`).' })
  @ApiResult([AuditEntryResponse])
  async list(@Ctx() ctx: RequestContext, @Query() query: AuditLogQuery): Promise<Enveloped<unknown[]>> {
    const storeId = ctx.store!.id;
    const { paging: limits } = this.config.section(PagingSection);
    const size = Math.min(query.pageRowCount ?? limits.defaultPageSize, limits.maxPageSize);
    const cursor = query.after === undefined ? undefined : decodeCursor(query.after);
    const filter = filterOf(query);
    const [rows, total] = await Promise.all([this.audit.page(storeId, filter, cursor?.position, size + 1), this.audit.count(storeId, filter)]);
    const page = rows.slice(0, size);
    const pageNumber = cursor?.page ?? 1;
    const last = page.at(-1);
    const nextCursor = rows.length > size && last ? encodeCursor({ at: last.at, id: last.id }, pageNumber + 1) : undefined;
    return {
      data: page.map(toAuditEntryResponse),
      paging: { pageNumber, pageRowCount: size, totalRowCount: total, pageCount: Math.ceil(total / size) },
      ...(nextCursor && { extra: { nextCursor } }),
    };
  }

  @Get('v1/auditlogs/export')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.auditLogRead, saasAdminTargetsAnyStore: true })
  @ApiOperation({ summary: 'The targeted store\'s audit entries with the list\'s filters, newest first, streamed as NDJSON or CSV.' })
  @ApiOkResponse({ description: 'One entry per line (NDJSON: as in the list; CSV: a header line, then the columns).', content: { 'application/x-ndjson': { schema: { type: 'string' } }, 'text/csv': { schema: { type: 'string' } } } })
  async export(@Ctx() ctx: RequestContext, @Query() query: AuditExportQuery, @Res() res: Response): Promise<void> {
    const storeId = ctx.store!.id;
    const csv = query.format === 'csv';
    const filter = filterOf(query);
    res.status(200).type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="audit-log.${csv ? 'csv' : 'ndjson'}"`);
    if (csv) res.write(`${CSV_HEADER}\n`);
    // A page at a time, waiting for the client to take each: never the whole result in memory.
    let position: AuditPosition | undefined;
    for (;;) {
      const rows = await this.audit.page(storeId, filter, position, EXPORT_PAGE);
      const chunk = rows.map((r) => (csv ? toCsvRow(r) : JSON.stringify(toAuditEntryResponse(r)))).join('\n');
      if (rows.length && !res.write(`${chunk}\n`)) await new Promise((resolve) => res.once('drain', resolve));
      if (rows.length < EXPORT_PAGE || res.destroyed) break;
      const last = rows.at(-1)!;
      position = { at: last.at, id: last.id };
    }
    res.end();
  }

  @Get('v1/auditlogs/verify')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.auditLogRead, saasAdminTargetsAnyStore: true })
  @ApiOperation({ summary: 'Checks the targeted store\'s keyed hash chain (how many entries are sound, the first that is not, and why) and its newest checkpoint (whether the newest entries were removed).' })
  @ApiResult(AuditVerifyResponse)
  async verify(@Ctx() ctx: RequestContext) {
    const check = await this.chain.verify(ctx.store!.id);
    return { status: 'OK', ...check, checkpoint: check.checkpoint && toCheckpointResponse(check.checkpoint) };
  }
}

function filterOf(q: AuditLogFilterQuery): AuditFilter {
  return { action: q.action, outcome: q.outcome, actorId: q.actorId, targetId: q.targetId, ip: q.ip, from: q.from, to: q.to };
}

// Opaque to the caller: base64url of the last entry's (at, id) and the next page's number.
function encodeCursor(position: AuditPosition, page: number): string {
  return Buffer.from(JSON.stringify([position.at.toISOString(), position.id, page])).toString('base64url');
}

function decodeCursor(cursor: string): { position: AuditPosition; page: number } {
  try {
    const [at, id, page] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const date = new Date(at as string);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    if (typeof at === 'string' && !Number.isNaN(date.getTime()) && typeof id === 'string' && uuid.test(id) && Number.isInteger(page) && (page as number) > 1) {
      return { position: { at: date, id }, page: page as number };
    }
  } catch {
    // fall through: not a cursor of ours
  }
  throw new AppError('AuditCursorInvalid', 'this cursor was not given by an audit log page');
}
