import { Controller, Get } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../../kernel/policy.js';
import { InjectRedis, type OptionalRedis } from '../../platform/redis/redis.module.js';

const CHECK_TIMEOUT_MS = 2000;

class HealthResponse {
  @ApiProperty({ enum: ['ok', 'error'] }) status: 'ok' | 'error';
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Each check that is up.' }) info: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Each check that is down.' }) error: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) details: Record<string, unknown>;
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @InjectRedis() private readonly redis: OptionalRedis,
  ) {}

  // The process answers: restart it if not.
  @Get('live')
  @Public()
  @HealthCheck()
  @ApiResult(HealthResponse)
  live() {
    return this.health.check([]);
  }

  // The process can serve: route traffic to it if so. PostgreSQL and, when configured, Redis
  // must answer; 503 otherwise.
  @Get('ready')
  @Public()
  @HealthCheck()
  @ApiResult(HealthResponse)
  ready() {
    const { redis } = this;
    return this.health.check([
      () => this.db.pingCheck('database', { timeout: CHECK_TIMEOUT_MS }),
      ...(redis
        ? [
            () =>
              this.indicators
                .check('redis')
                .attempt(async () => {
                  // not queued behind a reconnection: down now means down
                  if (redis.status !== 'ready') throw new Error(`redis is ${redis.status}`);
                  await redis.ping();
                })
                .withTimeout(CHECK_TIMEOUT_MS),
          ]
        : []),
    ]);
  }
}
