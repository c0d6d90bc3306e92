import { Global, Module } from '@nestjs/common';
import { OutcomeRateLimitInterceptor, RateLimits } from './rate-limit.js';

@Global()
@Module({
  providers: [RateLimits, OutcomeRateLimitInterceptor],
  exports: [RateLimits, OutcomeRateLimitInterceptor],
})
export class RateLimitModule {}
