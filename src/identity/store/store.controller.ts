import { Body, Controller, Get, Patch, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import { auditContext } from '../../kernel/audit.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { paging } from '../../kernel/paging.js';
import { Authenticated, Public, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { P } from '../../kernel/service-permissions.js';
import { ADMIN_ROLES, SAAS_ROLES } from '../../kernel/roles.js';
import { BriefStoreResponse, BriefStoresQuery, StoreListItem, StoreListQuery, StoreResponse, toBriefStoreResponse, toStoreListItem, toStoreResponse, UpdateStoreInput } from './store.dto.js';
import { StoreService } from './store.service.js';

@ApiTags('stores')
@Controller('auth-api/v1')
export class StoreController {
  constructor(private readonly stores: StoreService) {}

  @Get('briefstores')
  @Public()
  @Envelope({ dataName: 'stores', action: 'list' })
  @ApiOperation({ summary: 'Brief information on every store, for a store picker.' })
  @ApiResult([BriefStoreResponse])
  async briefStores(@Query() query: BriefStoresQuery): Promise<Enveloped<BriefStoreResponse[]>> {
    const [rows, total, page] = await this.stores.listBrief(query);
    return { data: rows.map(toBriefStoreResponse), paging: paging(page, total) };
  }

  @Get('store')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.storeRead, saasAdminTargetsAnyStore: true })
  @Envelope({ dataName: 'store', action: 'get' })
  @ApiOperation({ summary: 'The targeted store (its administrators; a SaaS administrator any store it targets).' })
  @ApiResult(StoreResponse)
  async get(@Ctx() ctx: RequestContext): Promise<Enveloped<unknown>> {
    return { data: toStoreResponse(await this.stores.current(ctx.store!)) };
  }

  @Patch('store')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.storeUpdate, saasAdminTargetsAnyStore: true })
  @Envelope({ dataName: 'store', action: 'update' })
  @ApiOperation({ summary: 'Change the targeted store (its administrators; a SaaS administrator any store it targets): name, full name, avatar, notification language; `isActive` by SaaS administrators only.' })
  @ApiResult(StoreResponse)
  async update(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Body() input: UpdateStoreInput): Promise<Enveloped<unknown>> {
    return { data: toStoreResponse(await this.stores.update(ctx.session!, ctx.store!, input, ctx.origin, auditContext(req))) };
  }

  @Get('stores')
  @Authenticated({ principals: USER_OR_API_KEY, roles: [SAAS_ROLES.superAdmin, SAAS_ROLES.saasAdmin], permission: P.storesList })
  @Envelope({ dataName: 'stores', action: 'list' })
  @ApiOperation({ summary: 'Every store, root and inactive ones included, oldest first, paged; `search` keeps those whose codename, name or full name contains it (SaaS administrators).' })
  @ApiResult([StoreListItem])
  async list(@Ctx() ctx: RequestContext, @Query() query: StoreListQuery): Promise<Enveloped<unknown[]>> {
    const [rows, total, page] = await this.stores.list(ctx.session!, query);
    return { data: rows.map(toStoreListItem), paging: paging(page, total) };
  }
}
