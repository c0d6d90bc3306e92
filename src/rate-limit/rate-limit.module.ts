import { Global, Module } from '@nestjs/common';
import { ClientIpRateLimitGuard, RateLimits } from './rate-limit.js';

@Global()
@Module({ providers: [RateLimits, ClientIpRateLimitGuard], exports: [RateLimits, ClientIpRateLimitGuard] })
export class RateLimitModule {}
