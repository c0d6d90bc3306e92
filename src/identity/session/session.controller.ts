import { Controller, Delete, Get, Param, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import { AppError } from '../../kernel/errors.js';
import { PageQuery, paging } from '../../kernel/paging.js';
import { Authenticated, USER_ONLY, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { AuditLog, auditActor, auditContext } from '../../kernel/audit.js';
import type { Tx } from '../../platform/database/transactions.js';
import type { SessionData } from '../../kernel/principal.js';
import { SessionIdParam, SessionListResponse, SessionsEndedResponse, toSessionListItem } from './session.dto.js';
import { SessionService } from './session.service.js';

// The caller's own sessions. The tag and operation ids are those the routes had in
// AuthController: clients generated from /docs-json call them by these names.
@ApiTags('auth')
@Controller('auth-api')
export class SessionController {
  constructor(
    private readonly sessions: SessionService,
    private readonly audit: AuditLog,
  ) {}

  @Get('sessions')
  @Authenticated({ principals: USER_ONLY, permission: null })
  @ApiOperation({ operationId: 'AuthController_listSessions', summary: 'Your live sessions, newest first, paged; the current one is marked.' })
  @ApiResult(SessionListResponse)
  async listSessions(@Ctx() ctx: RequestContext, @Query() query: PageQuery) {
    const session = ctx.session!;
    const [rows, total, page] = await this.sessions.list(session.storeId, session.userId, query);
    return { status: 'OK', sessions: rows.map((r) => toSessionListItem(r, session.sessionId)), paging: paging(page, total) };
  }

  @Delete('sessions/:id')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @ApiOperation({ operationId: 'AuthController_endSession', summary: 'End one of your sessions (a key: one of its creator\'s logins).' })
  @ApiResult(SessionsEndedResponse)
  async endSession(@Req() req: ContextRequest, @Param() params: SessionIdParam) {
    const session = req.ctx.session!;
    const ended = await this.sessions.end(session.storeId, { id: params.id, userId: session.userId }, (count, tx) => this.recordEnded(req, session, { type: 'session', id: params.id }, count, tx));
    if (!ended) throw new AppError('SessionNotFound');
    return { status: 'OK', ended };
  }

  @Delete('sessions')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @ApiOperation({ operationId: 'AuthController_endOtherSessions', summary: 'End all your sessions but this one (a key: all its creator\'s logins; the key stays).' })
  @ApiResult(SessionsEndedResponse)
  async endOtherSessions(@Req() req: ContextRequest) {
    const session = req.ctx.session!;
    // A key is no login: its id is not a session to keep, and the key itself is not ended here.
    const exceptId = session.principal === 'apiKey' ? undefined : session.sessionId;
    const ended = await this.sessions.end(session.storeId, { userId: session.userId, exceptId }, (count, tx) => this.recordEnded(req, session, { type: 'user', id: session.userId }, count, tx));
    return { status: 'OK', ended };
  }

  private recordEnded(req: ContextRequest, session: SessionData, target: { type: string; id: string }, count: number, tx: Tx): Promise<void> {
    return this.audit.record({ storeId: session.storeId, action: 'session.ended', outcome: 'success', actor: auditActor(session), target, details: { count } }, auditContext(req), tx);
  }
}
