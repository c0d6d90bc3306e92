import { Module } from '@nestjs/common';
import { SessionModule } from '../../identity/session/session.module.js';
import { UserModule } from '../../identity/user/user.module.js';
import { OverviewController } from './overview.controller.js';
import { OverviewService } from './overview.service.js';

// The overview composes other features' counts through their exported services (the audit
// log's AuditQueryService is global).
@Module({
  imports: [UserModule, SessionModule],
  controllers: [OverviewController],
  providers: [OverviewService],
})
export class OverviewModule {}
