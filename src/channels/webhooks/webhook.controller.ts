import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult, DeletedResponse } from '../../kernel/api-result.js';
import { auditActor, auditContext } from '../../kernel/audit.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { paging } from '../../kernel/paging.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { P, type ServicePermission } from '../../kernel/service-permissions.js';
import { PageQuery } from '../../kernel/paging.js';
import {
  CreateWebhookInput,
  DeliveryIdParam,
  DeliveryQuery,
  DeliveryResponse,
  toDeliveryResponse,
  toWebhookResponse,
  UpdateWebhookInput,
  WebhookIdParam,
  WebhookResponse,
  WebhookWithSecretResponse,
} from './webhook.dto.js';
import { WebhookDeliveries } from './webhook-deliveries.js';
import { WebhookService } from './webhook.service.js';

// Store administrators for their store; a SaaS administrator for any store it targets.
const admins = (permission: ServicePermission) => ({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission, saasAdminTargetsAnyStore: true });

// A store's webhook endpoints and their deliveries (docs/webhooks.md).
@ApiTags('webhooks')
@Controller('auth-api/v1/webhooks')
export class WebhookController {
  constructor(
    private readonly webhooks: WebhookService,
    private readonly deliveries: WebhookDeliveries,
  ) {}

  @Post()
  @Authenticated(admins(P.webhooksWrite))
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'webhook', action: 'create' })
  @ApiOperation({ summary: 'Add an endpoint; its signing secret is in this answer only.' })
  @ApiResult(WebhookWithSecretResponse)
  async create(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Body() input: CreateWebhookInput): Promise<Enveloped<unknown>> {
    const { endpoint, secret } = await this.webhooks.create(ctx.store!.id, auditActor(ctx.session!), input, auditContext(req));
    return { data: { ...toWebhookResponse(endpoint), secret } };
  }

  @Get()
  @Authenticated(admins(P.webhooksRead))
  @Envelope({ dataName: 'webhooks', action: 'list' })
  @ApiOperation({ summary: 'The store\'s endpoints, newest first, paged.' })
  @ApiResult([WebhookResponse])
  async list(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const page = this.webhooks.page(query);
    const [rows, total] = await this.webhooks.list(ctx.store!.id, page);
    return { data: rows.map(toWebhookResponse), paging: paging(page, total) };
  }

  @Get(':id')
  @Authenticated(admins(P.webhooksRead))
  @Envelope({ dataName: 'webhook', action: 'get' })
  @ApiResult(WebhookResponse)
  async get(@Ctx() ctx: RequestContext, @Param() params: WebhookIdParam): Promise<Enveloped<unknown>> {
    return { data: toWebhookResponse(await this.webhooks.get(ctx.store!.id, params.id)) };
  }

  @Patch(':id')
  @Authenticated(admins(P.webhooksWrite))
  @Envelope({ dataName: 'webhook', action: 'update' })
  @ApiOperation({ summary: 'Change the URL, topics, description, or enable / disable it.' })
  @ApiResult(WebhookResponse)
  async update(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: WebhookIdParam, @Body() input: UpdateWebhookInput): Promise<Enveloped<unknown>> {
    return { data: toWebhookResponse(await this.webhooks.update(ctx.store!.id, params.id, auditActor(ctx.session!), input, auditContext(req))) };
  }

  @Delete(':id')
  @Authenticated(admins(P.webhooksWrite))
  @Envelope({ dataName: 'webhook', action: 'delete' })
  @ApiOperation({ summary: 'Delete an endpoint and its delivery log.' })
  @ApiResult(DeletedResponse)
  async delete(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: WebhookIdParam): Promise<Enveloped<unknown>> {
    await this.webhooks.delete(ctx.store!.id, params.id, auditActor(ctx.session!), auditContext(req));
    return { data: { id: params.id } };
  }

  @Post(':id/rotate-secret')
  @Authenticated(admins(P.webhooksWrite))
  @HttpCode(HttpStatus.OK)
  @Envelope({ dataName: 'webhook', action: 'update' })
  @ApiOperation({ summary: 'A new signing secret, in this answer only; the previous one signs beside it for `webhooks.secretOverlapHours`.' })
  @ApiResult(WebhookWithSecretResponse)
  async rotateSecret(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Param() params: WebhookIdParam): Promise<Enveloped<unknown>> {
    const { endpoint, secret } = await this.webhooks.rotateSecret(ctx.store!.id, params.id, auditActor(ctx.session!), auditContext(req));
    return { data: { ...toWebhookResponse(endpoint), secret } };
  }

  @Post(':id/test')
  @Authenticated(admins(P.webhooksWrite))
  @HttpCode(HttpStatus.OK)
  @Envelope({ dataName: 'delivery', action: 'create' })
  @ApiOperation({ summary: 'Send a `webhook.test` event now; answers its delivery, attempted.' })
  @ApiResult(DeliveryResponse)
  async test(@Ctx() ctx: RequestContext, @Param() params: WebhookIdParam): Promise<Enveloped<unknown>> {
    const endpoint = await this.webhooks.get(ctx.store!.id, params.id);
    return { data: toDeliveryResponse(await this.deliveries.sendTest(endpoint)) };
  }

  @Get(':id/deliveries')
  @Authenticated(admins(P.webhooksRead))
  @Envelope({ dataName: 'deliveries', action: 'list' })
  @ApiOperation({ summary: 'The endpoint\'s deliveries, newest first, paged; `status` filters.' })
  @ApiResult([DeliveryResponse])
  async deliveryLog(@Ctx() ctx: RequestContext, @Param() params: WebhookIdParam, @Query() query: DeliveryQuery): Promise<Enveloped<unknown[]>> {
    const page = this.webhooks.page(query);
    const [rows, total] = await this.webhooks.deliveries(ctx.store!.id, params.id, query.status, page);
    return { data: rows.map(toDeliveryResponse), paging: paging(page, total) };
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @Authenticated(admins(P.webhooksWrite))
  @HttpCode(HttpStatus.OK)
  @Envelope({ dataName: 'delivery', action: 'update' })
  @ApiOperation({ summary: 'One more attempt of a delivery, now; answers it, attempted.' })
  @ApiResult(DeliveryResponse)
  async retry(@Ctx() ctx: RequestContext, @Param() params: DeliveryIdParam): Promise<Enveloped<unknown>> {
    const delivery = await this.webhooks.delivery(ctx.store!.id, params.id, params.deliveryId);
    return { data: toDeliveryResponse(await this.deliveries.retry(delivery)) };
  }
}
