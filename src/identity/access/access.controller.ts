import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult, DeletedResponse } from '../../kernel/api-result.js';
import { auditContext } from '../../kernel/audit.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { PageQuery, paging } from '../../kernel/paging.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { type ContextRequest, Ctx, principalOf, type RequestContext } from '../../kernel/request-context.js';
import { P } from '../../kernel/service-permissions.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { CreateGrantInput, EffectivePermissionsResponse, IdParam, PermissionDecisionResponse, PermissionGrantResponse, PermissionNameParam, toGrantResponse } from './access.dto.js';
import { PermissionCheckService } from './permission-check.service.js';
import { PermissionGrantService } from './permission-grant.service.js';

@ApiTags('permissions')
@Controller('auth-api')
export class AccessController {
  constructor(
    private readonly permissions: PermissionCheckService,
    private readonly grants: PermissionGrantService,
  ) {}

  @Get('permissions')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @ApiOperation({ summary: 'Your effective permissions: every known permission with `canDo` and the objects that are exceptions.' })
  @ApiResult(EffectivePermissionsResponse)
  async effective(@Ctx() ctx: RequestContext) {
    return { status: 'OK', permissions: await this.permissions.effective(principalOf(ctx)) };
  }

  @Get('permissions/:name')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @ApiOperation({ summary: 'Whether you hold one permission: `{ canDo, exceptions }`.' })
  @ApiResult(PermissionDecisionResponse)
  async one(@Ctx() ctx: RequestContext, @Param() params: PermissionNameParam) {
    return { status: 'OK', permission: params.name, ...(await this.permissions.decision(principalOf(ctx), params.name)) };
  }

  @Post('v1/permissiongrants')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.grantsWrite })
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'permissionGrant', action: 'create' })
  @ApiOperation({ summary: 'Grant (or, with canDo false, deny) a permission you hold to a role below yours, a user you may manage other than yourself, a group of such users, or (the store owner) to the whole store; optionally for one object.' })
  @ApiResult(PermissionGrantResponse)
  async create(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Body() input: CreateGrantInput): Promise<Enveloped<unknown>> {
    return { data: toGrantResponse(await this.grants.createGrant(principalOf(ctx), ctx.store!, input, auditContext(req)), this.grants.roleOut) };
  }

  @Get('v1/permissiongrants')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.grantsRead })
  @Envelope({ dataName: 'permissionGrants', action: 'list' })
  @ApiOperation({ summary: 'The grants of this store (at root: the SaaS-level grants), paged.' })
  @ApiResult([PermissionGrantResponse])
  async list(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const [rows, total, page] = await this.grants.listGrants(principalOf(ctx), ctx.store!, query);
    return { data: rows.map((g) => toGrantResponse(g, this.grants.roleOut)), paging: paging(page, total) };
  }

  @Get('v1/permissiongrants/:id')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.grantsRead })
  @Envelope({ dataName: 'permissionGrant', action: 'get' })
  @ApiOperation({ summary: 'One grant of this store (at root: a SaaS-level grant).' })
  @ApiResult(PermissionGrantResponse)
  async get(@Ctx() ctx: RequestContext, @Param() params: IdParam): Promise<Enveloped<unknown>> {
    return { data: toGrantResponse(await this.grants.getGrant(principalOf(ctx), ctx.store!, params.id), this.grants.roleOut) };
  }

  @Delete('v1/permissiongrants/:id')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.grantsWrite })
  @Envelope({ dataName: 'permissionGrant', action: 'delete' })
  @ApiOperation({ summary: 'Delete a grant of this store, for a role below yours or users you may manage, not one reaching you that another set (the store owner: any); it stops counting at once.' })
  @ApiResult(DeletedResponse)
  async delete(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: IdParam): Promise<Enveloped<unknown>> {
    await this.grants.deleteGrant(principalOf(ctx), ctx.store!, params.id, auditContext(req));
    return { data: { id: params.id } };
  }
}
