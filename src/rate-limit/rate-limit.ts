import {
  Injectable,
  SetMetadata,
  UseGuards,
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { InjectRedis, type OptionalRedis } from '../redis/redis.module.js';
import type { RateLimitsSettings } from '../config/settings.js';

export type RateLimitName = keyof RateLimitsSettings;

// Named limiters from settings `rateLimits`: in Redis when configured (they hold across
// replicas), in memory otherwise.
@Injectable()
export class RateLimits {
  private readonly limiters = new Map<RateLimitName, RateLimiterAbstract>();

  constructor(
    private readonly config: AppConfig,
    @InjectRedis() private readonly redis: OptionalRedis,
  ) {}

  private limiter(name: RateLimitName): RateLimiterAbstract {
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const { points, durationSeconds } = this.config.settings.rateLimits[name];
      const keyPrefix = `${this.config.env.PROJECT_CODENAME}:${this.config.env.SERVICE_CODENAME}:rl:${name}`;
      const options = { points, duration: durationSeconds, keyPrefix };
      limiter = this.redis ? new RateLimiterRedis({ ...options, storeClient: this.redis }) : new RateLimiterMemory(options);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }

  // Takes one point for `key`, or 429 TooManyRequests with Retry-After.
  async consume(name: RateLimitName, key: string): Promise<void> {
    try {
      await this.limiter(name).consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection; // the store failed: not the client's fault
      throw tooMany(rejection.msBeforeNext);
    }
  }

  // 429 when `key` has used all its points, without taking one (failure counters).
  async assertOpen(name: RateLimitName, key: string): Promise<void> {
    const state = await this.limiter(name).get(key);
    if (state && state.consumedPoints >= this.config.settings.rateLimits[name].points) throw tooMany(state.msBeforeNext);
  }

  // Counts a failure; the 429 comes from the next assertOpen.
  async penalize(name: RateLimitName, key: string): Promise<void> {
    await this.limiter(name).penalty(key, 1);
  }

  async reset(name: RateLimitName, key: string): Promise<void> {
    await this.limiter(name).delete(key);
  }
}

function tooMany(msBeforeNext: number): AppError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new AppError('TooManyRequests', `too many requests; retry in ${seconds} s`, { 'Retry-After': String(seconds) });
}

const RATE_LIMIT = 'rateLimit';

@Injectable()
export class ClientIpRateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimits,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const name = this.reflector.get<RateLimitName>(RATE_LIMIT, context.getHandler());
    const req = context.switchToHttp().getRequest<Request>();
    // req.ip honours TRUST_PROXY, so a client cannot pick its own key unless the proxy is trusted.
    await this.limits.consume(name, req.ip ?? 'unknown');
    return true;
  }
}

// Limits a route per client IP with the named settings.
export const RateLimitedPerIp = (name: RateLimitName) =>
  applyDecorators(SetMetadata(RATE_LIMIT, name), UseGuards(ClientIpRateLimitGuard));
