import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult, DeletedResponse } from '../../kernel/api-result.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { paging, PageQuery } from '../../kernel/paging.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { auditContext } from '../../kernel/audit.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { P } from '../../kernel/service-permissions.js';
import { ADMIN_ROLES, hasAdminRole } from '../../kernel/roles.js';
import { SessionListItem, SessionsEndedResponse, toSessionListItem } from '../session/index.js';
import { UserResponse } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { VerificationGate } from '../verification/verification.gate.js';
import { CreateUserInput, UpdateUserInput, UserIdParam, UserListQuery } from './user-admin.dto.js';
import { UserAdminService } from './user-admin.service.js';

@ApiTags('users')
@Controller('auth-api')
export class UserAdminController {
  constructor(
    private readonly admin: UserAdminService,
    private readonly users: UserService,
    private readonly verification: VerificationGate,
  ) {}

  @Post('users')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersCreate, publicWhen: 'userRegisterIsPublic' })
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'user', action: 'create' })
  @ApiOperation({ summary: 'Create a user in the targeted store (admins; anyone when userRegisterIsPublic).' })
  @ApiResult(UserResponse)
  async create(@Req() req: ContextRequest, @Body() input: CreateUserInput): Promise<Enveloped<unknown>> {
    const { ctx } = req;
    const user = await this.admin.create(ctx.session, ctx.store!, input, ctx.origin, auditContext(req));
    // A caller without an admin role got here only because userRegisterIsPublic opens the route:
    // a public registration, whose answer (like the register routes') says which verification
    // flows the new user starts next.
    const registration = !ctx.session || !hasAdminRole(ctx.session.roles);
    return { data: this.users.toResponse(user), ...(registration && { extra: { ...this.verification.registrationFlags(user) } }) };
  }

  @Get('v1/users')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersList })
  @Envelope({ dataName: 'users', action: 'list' })
  @ApiOperation({ summary: 'Users of the targeted store, oldest first, paged; `search` keeps those whose email, mobile or names contain it.' })
  @ApiResult([UserResponse])
  async list(@Ctx() ctx: RequestContext, @Query() query: UserListQuery): Promise<Enveloped<unknown[]>> {
    const [rows, total, page] = await this.admin.list(ctx.store!, query);
    return { data: rows.map((u) => this.users.toResponse(u)), paging: paging(page, total) };
  }

  @Get('v1/users/:id')
  @Authenticated({ principals: USER_OR_API_KEY, permission: P.usersRead })
  @Envelope({ dataName: 'user', action: 'get' })
  @ApiOperation({ summary: 'A user of the store (admins), or your own profile.' })
  @ApiResult(UserResponse)
  async get(@Ctx() ctx: RequestContext, @Param() params: UserIdParam): Promise<Enveloped<unknown>> {
    return { data: this.users.toResponse(await this.admin.get(ctx.session!, ctx.store!, params.id)) };
  }

  @Patch('v1/users/:id')
  @Authenticated({ principals: USER_OR_API_KEY, permission: P.usersUpdate })
  @Envelope({ dataName: 'user', action: 'update' })
  @ApiOperation({ summary: 'Change a user (admins), or your own profile (not your role, store or flags).' })
  @ApiResult(UserResponse)
  async update(@Req() req: ContextRequest, @Param() params: UserIdParam, @Body() input: UpdateUserInput): Promise<Enveloped<unknown>> {
    const { ctx } = req;
    return { data: this.users.toResponse(await this.admin.update(ctx.session!, ctx.store!, params.id, input, ctx.origin, auditContext(req))) };
  }

  @Delete('v1/users/:id')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersDelete })
  @Envelope({ dataName: 'user', action: 'delete' })
  @ApiOperation({ summary: 'Delete a user of the store and end its sessions.' })
  @ApiResult(DeletedResponse)
  async delete(@Req() req: ContextRequest, @Param() params: UserIdParam): Promise<Enveloped<unknown>> {
    const { ctx } = req;
    await this.admin.delete(ctx.session!, ctx.store!, params.id, auditContext(req));
    return { data: { id: params.id } };
  }

  @Get('v1/users/:id/sessions')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersRead })
  @Envelope({ dataName: 'sessions', action: 'list' })
  @ApiOperation({ summary: "A user's live sessions (its devices), newest first, paged; yours is marked current." })
  @ApiResult([SessionListItem])
  async listSessions(@Ctx() ctx: RequestContext, @Param() params: UserIdParam, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const [rows, total, page] = await this.admin.listSessions(ctx.session!, ctx.store!, params.id, query);
    return { data: rows.map((r) => toSessionListItem(r, ctx.session!.sessionId)), paging: paging(page, total) };
  }

  @Delete('v1/users/:id/sessions')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersUpdate })
  @ApiOperation({ summary: "End every session of a user (signs it out of all its devices; yours stays when it is you)." })
  @ApiResult(SessionsEndedResponse)
  async endSessions(@Req() req: ContextRequest, @Param() params: UserIdParam) {
    const { ctx } = req;
    const ended = await this.admin.endSessions(ctx.session!, ctx.store!, params.id, auditContext(req));
    return { status: 'OK', ended };
  }

  @Delete('v1/users/:id/mfa')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersUpdate })
  @ApiOperation({ summary: "Reset a user's app factors (authenticator app, recovery codes, passkeys) and end its sessions; not your own." })
  @ApiResult(SessionsEndedResponse)
  async resetFactors(@Req() req: ContextRequest, @Param() params: UserIdParam) {
    const { ctx } = req;
    const ended = await this.admin.resetFactors(ctx.session!, ctx.store!, params.id, auditContext(req));
    return { status: 'OK', ended };
  }
}
