import {
  Injectable,
  SetMetadata,
  UseInterceptors,
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiFailures } from '../api-result.js';
import { AppError } from '../errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { InjectRedis, isRedisLost, type OptionalRedis } from '../../platform/redis/redis.module.js';
import type { RateLimitsSettings } from './rate-limit.settings.js';
import { RateLimitSection } from './rate-limit.settings.js';

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
    // While Redis reconnects a limit cannot be read: 503 now. Waiting for the reconnection would
    // release every held attempt at once (a burst past an account's limit refused the right
    // password with 429), and a call that timed out would still count once Redis is back.
    if (this.redis && isRedisLost(this.redis)) throw new AppError('ServiceUnavailable', 'rate limits cannot be read: Redis is reconnecting');
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const { points, durationSeconds } = this.config.section(RateLimitSection).rateLimits[name];
      const keyPrefix = `${this.config.env.PROJECT_CODENAME}:${this.config.env.SERVICE_CODENAME}:rl:${name}`;
      const options = { points, duration: durationSeconds, keyPrefix };
      limiter = this.redis ? new RateLimiterRedis({ ...options, storeClient: this.redis }) : new RateLimiterMemory(options);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }

  // Takes one point for `key`, or 429 TooManyRequests with Retry-After. Atomic in Redis and in
  // memory: under any concurrency at most `points` calls per window get through. Answers the
  // points left in the window: exactly one call per window sees 0 (it took the last).
  async consume(name: RateLimitName, key: string): Promise<number> {
    return (await this.take(name, key)).remainingPoints;
  }

  // Takes one point for `key` like consume, and answers how to give it back: the point returns
  // only while its window lasts (a later window does not gain one). A refused call holds no
  // point either, so a point given back lets exactly one more call through.
  async reserve(name: RateLimitName, key: string): Promise<() => Promise<void>> {
    const windowEnd = Date.now() + (await this.take(name, key, true)).msBeforeNext;
    return async () => {
      if (Date.now() < windowEnd) await this.release(name, key);
    };
  }

  private async take(name: RateLimitName, key: string, refundRefused = false): Promise<RateLimiterRes> {
    try {
      return await this.limiter(name).consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection; // the store failed: not the client's fault
      if (refundRefused) await this.release(name, key);
      throw this.tooMany(name, rejection.msBeforeNext);
    }
  }

  // 429 when `key` has used all its points, without taking one (failure counters).
  async assertOpen(name: RateLimitName, key: string): Promise<void> {
    const state = await this.limiter(name).get(key);
    if (state && state.consumedPoints >= this.config.section(RateLimitSection).rateLimits[name].points) throw this.tooMany(name, state.msBeforeNext);
  }

  // Whether `key` has used all its points (a reserved attempt that failed was the last one).
  async exhausted(name: RateLimitName, key: string): Promise<boolean> {
    const state = await this.limiter(name).get(key);
    return !!state && state.consumedPoints >= this.config.section(RateLimitSection).rateLimits[name].points;
  }

  // Counts a failure; the 429 comes from the next assertOpen.
  async penalize(name: RateLimitName, key: string): Promise<void> {
    await this.limiter(name).penalty(key, 1);
  }

  // Gives back a point taken by consume (an attempt that turned out not to count).
  async release(name: RateLimitName, key: string): Promise<void> {
    await this.limiter(name).reward(key, 1);
  }

  async reset(name: RateLimitName, key: string): Promise<void> {
    await this.limiter(name).delete(key);
  }

  // Names the setting, so whoever meets the limit knows what to change.
  private tooMany(name: RateLimitName, msBeforeNext: number): AppError {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    const { points, durationSeconds } = this.config.section(RateLimitSection).rateLimits[name];
    return new AppError('TooManyRequests', `too many requests; retry in ${seconds} s (limit: settings rateLimits.${name}, ${points} per ${durationSeconds} s)`, {
      'Retry-After': String(seconds),
    });
  }
}

// Counts outcomes per client IP: successes against one limit, client errors (4xx) against
// another, so a developer's failed attempts do not use up the budget of real registrations.
// A success point is taken before the route runs and given back when it fails: under any
// concurrency at most `points` calls per window succeed (a failing call holds its point until
// it answers). Failures are counted after the fact: a few concurrent ones may pass the last.
@Injectable()
export class OutcomeRateLimitInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimits,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const { success, failure } = this.reflector.get<OutcomeLimits>(OUTCOME_LIMITS, context.getHandler());
    const key = context.switchToHttp().getRequest<Request>().ip ?? 'unknown';
    const reserve = async () => {
      await this.limits.assertOpen(failure, key);
      return this.limits.reserve(success, key);
    };
    return from(reserve()).pipe(
      mergeMap((giveBack) =>
        next.handle().pipe(
          catchError(async (error: unknown) => {
            await giveBack();
            const status = (error as { status?: number }).status ?? 500;
            if (status >= 400 && status < 500 && status !== 429) await this.limits.penalize(failure, key);
            throw error;
          }),
        ),
      ),
    );
  }
}

interface OutcomeLimits {
  success: RateLimitName;
  failure: RateLimitName;
}
const OUTCOME_LIMITS = 'outcomeRateLimits';

// Limits a route per client IP, successes and failures apart (public registrations).
export const RateLimitedOutcomesPerIp = (limits: OutcomeLimits) =>
  applyDecorators(SetMetadata(OUTCOME_LIMITS, limits), UseInterceptors(OutcomeRateLimitInterceptor), ApiFailures(429));
