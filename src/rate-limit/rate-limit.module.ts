import { Global, Module } from '@nestjs/common';
import { ClientIpRateLimitGuard, OutcomeRateLimitInterceptor, RateLimits } from './rate-limit.js';

@Global()
@Module({
  providers: [RateLimits, ClientIpRateLimitGuard, OutcomeRateLimitInterceptor],
  exports: [RateLimits, ClientIpRateLimitGuard, OutcomeRateLimitInterceptor],
})
export class RateLimitModule {}
