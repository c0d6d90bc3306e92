import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type RequestContext } from '../../kernel/request-context.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { P } from '../../kernel/service-permissions.js';
import { OverviewResponse } from './overview.dto.js';
import { OverviewService } from './overview.service.js';

// The store is the request's: its own for an administrator, any targeted one for a super or
// SaaS administrator (as for the audit log, whose entries it counts).
@ApiTags('overview')
@Controller('auth-api/v1')
export class OverviewController {
  constructor(private readonly overview: OverviewService) {}

  @Get('overview')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.overviewRead, saasAdminTargetsAnyStore: true })
  @ApiOperation({ summary: 'The targeted store at a glance: its users, live sessions, and sign-ins and refused sign-ins per hour (24 h) and per day (7 d).' })
  @ApiResult(OverviewResponse)
  async get(@Ctx() ctx: RequestContext): Promise<OverviewResponse> {
    return { status: 'OK', ...(await this.overview.of(ctx.store!)) };
  }
}
