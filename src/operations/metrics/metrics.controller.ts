import { timingSafeEqual } from 'node:crypto';
import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AppError } from '../../kernel/errors.js';
import { Public } from '../../kernel/policy.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Metrics } from '../../kernel/metrics.js';

// Public to the route policy: its own credential is the metrics token, not a user or key.
@ApiTags('operations')
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Prometheus metrics. Needs `Authorization: Bearer <METRICS_TOKEN>` when that is set; served on METRICS_PORT instead when that is set; off in staging and production with neither.' })
  @ApiOkResponse({ description: 'Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } })
  async scrape(@Headers('authorization') authorization: string | undefined, @Res() res: Response): Promise<void> {
    const { METRICS_TOKEN, METRICS_PORT, NODE_ENV } = this.config.env;
    const openByDefault = NODE_ENV === 'development' || NODE_ENV === 'test';
    if (METRICS_PORT !== undefined || (!METRICS_TOKEN && !openByDefault)) throw new AppError('RouteNotFound');
    if (METRICS_TOKEN && !sameSecret(/^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1] ?? '', METRICS_TOKEN)) {
      throw new AppError('Unauthorized', 'send Authorization: Bearer <METRICS_TOKEN>');
    }
    res.set('Content-Type', this.metrics.registry.contentType).set('Cache-Control', 'no-store').send(await this.metrics.registry.metrics());
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
