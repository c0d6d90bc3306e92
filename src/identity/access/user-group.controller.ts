import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult, DeletedResponse } from '../../kernel/api-result.js';
import { auditContext } from '../../kernel/audit.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { PageQuery, paging } from '../../kernel/paging.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { type ContextRequest, Ctx, principalOf, type RequestContext } from '../../kernel/request-context.js';
import { P, type ServicePermission } from '../../kernel/service-permissions.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { CreateGroupInput, CreateMemberInput, IdParam, MemberQuery, toGroupResponse, toMemberResponse, UpdateGroupInput, UpdateMemberInput, UserGroupMemberResponse, UserGroupResponse } from './access.dto.js';
import { UserGroupService } from './user-group.service.js';

const admins = (permission: ServicePermission) => ({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission });

// User groups and their members (settings `userGroupsActive`); admin-level users only.
@ApiTags('user groups')
@Controller('auth-api/v1')
export class UserGroupController {
  constructor(private readonly groups: UserGroupService) {}

  @Post('usergroups')
  @Authenticated(admins(P.groupsWrite))
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'userGroup', action: 'create' })
  @ApiOperation({ summary: 'Create a group: in this store (userGroupsInTenantLevel), else global (SaaS admins only).' })
  @ApiResult(UserGroupResponse)
  async create(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Body() input: CreateGroupInput): Promise<Enveloped<unknown>> {
    return { data: toGroupResponse(await this.groups.createGroup(principalOf(ctx), ctx.store!, input, ctx.origin, auditContext(req))) };
  }

  @Get('usergroups')
  @Authenticated(admins(P.groupsRead))
  @Envelope({ dataName: 'userGroups', action: 'list' })
  @ApiOperation({ summary: 'This store\'s groups and the global ones, paged.' })
  @ApiResult([UserGroupResponse])
  async list(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const [rows, total, page] = await this.groups.listGroups(principalOf(ctx), ctx.store!, query);
    return { data: rows.map(toGroupResponse), paging: paging(page, total) };
  }

  @Get('usergroups/:id')
  @Authenticated(admins(P.groupsRead))
  @Envelope({ dataName: 'userGroup', action: 'get' })
  @ApiResult(UserGroupResponse)
  async get(@Ctx() ctx: RequestContext, @Param() params: IdParam): Promise<Enveloped<unknown>> {
    return { data: toGroupResponse(await this.groups.getGroup(principalOf(ctx), ctx.store!, params.id)) };
  }

  @Patch('usergroups/:id')
  @Authenticated(admins(P.groupsWrite))
  @Envelope({ dataName: 'userGroup', action: 'update' })
  @ApiOperation({ summary: 'Rename a group or change its avatar, if you may manage each of its members.' })
  @ApiResult(UserGroupResponse)
  async update(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: IdParam, @Body() input: UpdateGroupInput): Promise<Enveloped<unknown>> {
    return { data: toGroupResponse(await this.groups.updateGroup(principalOf(ctx), ctx.store!, params.id, input, auditContext(req))) };
  }

  @Delete('usergroups/:id')
  @Authenticated(admins(P.groupsWrite))
  @Envelope({ dataName: 'userGroup', action: 'delete' })
  @ApiOperation({ summary: 'Delete a group, if you may manage each of its members and it takes from you nothing another set; its memberships and grants end with it.' })
  @ApiResult(DeletedResponse)
  async delete(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: IdParam): Promise<Enveloped<unknown>> {
    await this.groups.deleteGroup(principalOf(ctx), ctx.store!, params.id, auditContext(req));
    return { data: { id: params.id } };
  }

  @Post('usergroupmembers')
  @Authenticated(admins(P.membersWrite))
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'userGroupMember', action: 'create' })
  @ApiOperation({ summary: 'Add a user of this store whom you may manage to a group of this store or a global group.' })
  @ApiResult(UserGroupMemberResponse)
  async addMember(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Body() input: CreateMemberInput): Promise<Enveloped<unknown>> {
    return { data: toMemberResponse(await this.groups.createMember(principalOf(ctx), ctx.store!, input, auditContext(req))) };
  }

  @Get('usergroupmembers')
  @Authenticated(admins(P.membersRead))
  @Envelope({ dataName: 'userGroupMembers', action: 'list' })
  @ApiOperation({ summary: 'Memberships of this store\'s users (optionally of one group), paged.' })
  @ApiResult([UserGroupMemberResponse])
  async members(@Ctx() ctx: RequestContext, @Query() query: MemberQuery): Promise<Enveloped<unknown[]>> {
    const [rows, total, page] = await this.groups.listMembers(principalOf(ctx), ctx.store!, query);
    return { data: rows.map(toMemberResponse), paging: paging(page, total) };
  }

  @Get('usergroupmembers/:id')
  @Authenticated(admins(P.membersRead))
  @Envelope({ dataName: 'userGroupMember', action: 'get' })
  @ApiResult(UserGroupMemberResponse)
  async member(@Ctx() ctx: RequestContext, @Param() params: IdParam): Promise<Enveloped<unknown>> {
    return { data: toMemberResponse(await this.groups.getMember(principalOf(ctx), ctx.store!, params.id)) };
  }

  @Patch('usergroupmembers/:id')
  @Authenticated(admins(P.membersWrite))
  @Envelope({ dataName: 'userGroupMember', action: 'update' })
  @ApiOperation({ summary: 'Move a membership to another group or user, under the rules of adding and of removing one.' })
  @ApiResult(UserGroupMemberResponse)
  async updateMember(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: IdParam, @Body() input: UpdateMemberInput): Promise<Enveloped<unknown>> {
    return { data: toMemberResponse(await this.groups.updateMember(principalOf(ctx), ctx.store!, params.id, input, auditContext(req))) };
  }

  @Delete('usergroupmembers/:id')
  @Authenticated(admins(P.membersWrite))
  @Envelope({ dataName: 'userGroupMember', action: 'delete' })
  @ApiOperation({ summary: 'Remove a membership of a user you may manage; your own only if you set it and its group\'s grants.' })
  @ApiResult(DeletedResponse)
  async removeMember(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: IdParam): Promise<Enveloped<unknown>> {
    await this.groups.deleteMember(principalOf(ctx), ctx.store!, params.id, auditContext(req));
    return { data: { id: params.id } };
  }
}
