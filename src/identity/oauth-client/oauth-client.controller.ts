import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult, DeletedResponse } from '../../kernel/api-result.js';
import { auditActor, auditContext } from '../../kernel/audit.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { PageQuery, paging } from '../../kernel/paging.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { P, type ServicePermission } from '../../kernel/service-permissions.js';
import { CreateOAuthClientInput, OAuthClientIdParam, OAuthClientResponse, OAuthClientWithSecretResponse, toOAuthClientResponse, UpdateOAuthClientInput } from './oauth-client.dto.js';
import { OAuthClientService } from './oauth-client.service.js';

// Store administrators for their store; a SaaS administrator for any store it targets.
const admins = (permission: ServicePermission) => ({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission, saasAdminTargetsAnyStore: true });

// A store's OAuth clients of the OpenID Connect provider (docs/oidc.md).
@ApiTags('oauth clients')
@Controller('auth-api/v1/oauthclients')
export class OAuthClientController {
  constructor(private readonly clients: OAuthClientService) {}

  @Post()
  @Authenticated(admins(P.oauthClientsWrite))
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'oauthClient', action: 'create' })
  @ApiOperation({ summary: 'Register a client; a confidential one\'s secret is in this answer only.' })
  @ApiResult(OAuthClientWithSecretResponse)
  async create(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Body() input: CreateOAuthClientInput): Promise<Enveloped<unknown>> {
    const { client, clientSecret } = await this.clients.create(ctx.store!.id, auditActor(ctx.session!), input, auditContext(req));
    return { data: { ...toOAuthClientResponse(client), ...(clientSecret && { clientSecret }) } };
  }

  @Get()
  @Authenticated(admins(P.oauthClientsRead))
  @Envelope({ dataName: 'oauthClients', action: 'list' })
  @ApiOperation({ summary: 'The store\'s clients, newest first, paged.' })
  @ApiResult([OAuthClientResponse])
  async list(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const page = this.clients.page(query);
    const [rows, total] = await this.clients.list(ctx.store!.id, page);
    return { data: rows.map(toOAuthClientResponse), paging: paging(page, total) };
  }

  @Get(':id')
  @Authenticated(admins(P.oauthClientsRead))
  @Envelope({ dataName: 'oauthClient', action: 'get' })
  @ApiResult(OAuthClientResponse)
  async get(@Ctx() ctx: RequestContext, @Param() params: OAuthClientIdParam): Promise<Enveloped<unknown>> {
    return { data: toOAuthClientResponse(await this.clients.get(ctx.store!.id, params.id)) };
  }

  @Patch(':id')
  @Authenticated(admins(P.oauthClientsWrite))
  @Envelope({ dataName: 'oauthClient', action: 'update' })
  @ApiOperation({ summary: 'Change the name, redirect URIs, grant types, scopes or first-party flag; not the authentication method.' })
  @ApiResult(OAuthClientResponse)
  async update(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: OAuthClientIdParam, @Body() input: UpdateOAuthClientInput): Promise<Enveloped<unknown>> {
    return { data: toOAuthClientResponse(await this.clients.update(ctx.store!.id, params.id, auditActor(ctx.session!), input, auditContext(req))) };
  }

  @Delete(':id')
  @Authenticated(admins(P.oauthClientsWrite))
  @Envelope({ dataName: 'oauthClient', action: 'delete' })
  @ApiOperation({ summary: 'Delete a client: its secret and tokens stop being accepted.' })
  @ApiResult(DeletedResponse)
  async delete(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: OAuthClientIdParam): Promise<Enveloped<unknown>> {
    await this.clients.delete(ctx.store!.id, params.id, auditActor(ctx.session!), auditContext(req));
    return { data: { id: params.id } };
  }

  @Post(':id/rotate-secret')
  @Authenticated(admins(P.oauthClientsWrite))
  @HttpCode(HttpStatus.OK)
  @Envelope({ dataName: 'oauthClient', action: 'update' })
  @ApiOperation({ summary: 'A new client secret, in this answer only; the previous one stops at once. 400 for a client without a secret.' })
  @ApiResult(OAuthClientWithSecretResponse)
  async rotateSecret(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: OAuthClientIdParam): Promise<Enveloped<unknown>> {
    const { client, clientSecret } = await this.clients.rotateSecret(ctx.store!.id, params.id, auditActor(ctx.session!), auditContext(req));
    return { data: { ...toOAuthClientResponse(client), clientSecret } };
  }
}
