import { Module } from '@nestjs/common';
import { SvcAuthModule } from '@svc/nest';
import { ReportsController } from './reports.controller.js';

const baseUrl = process.env.SVC_BASE_URL ?? 'http://127.0.0.1:3000';
const apiKey = process.env.SVC_API_KEY;

// Without SVC_API_KEY (apiKey undefined), tokens are verified offline only (no API keys, a logout is not seen
// before the token expires); with an administrator's key, introspection sees both.
@Module({
  imports: [SvcAuthModule.forRoot({ baseUrl, apiKey, cacheSeconds: 30 })],
  controllers: [ReportsController],
})
export class AppModule {}
