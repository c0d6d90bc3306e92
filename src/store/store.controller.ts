import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Envelope, type Enveloped } from '../common/envelope.js';
import { paging, PageQuery } from '../common/paging.js';
import { Public } from '../common/policy.js';
import { toBriefStoreResponse, type BriefStoreResponse } from './store.dto.js';
import { StoreService } from './store.service.js';

@ApiTags('stores')
@Controller('auth-api/v1')
export class StoreController {
  constructor(private readonly stores: StoreService) {}

  @Get('briefstores')
  @Public()
  @Envelope({ dataName: 'stores', action: 'list' })
  @ApiOperation({ summary: 'Brief information on every store, for a store picker.' })
  async briefStores(@Query() query: PageQuery): Promise<Enveloped<BriefStoreResponse[]>> {
    const [rows, total, page] = await this.stores.listBrief(query);
    return { data: rows.map(toBriefStoreResponse), paging: paging(page, total) };
  }
}
