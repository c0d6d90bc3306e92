import { Global, Module } from '@nestjs/common';
import { CorsPolicy } from './cors-policy.js';

// One CORS policy for every transport: HTTP (app.ts) and the event channel.
@Global()
@Module({ providers: [CorsPolicy], exports: [CorsPolicy] })
export class CorsModule {}
