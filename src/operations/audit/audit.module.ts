import { Global, Module } from '@nestjs/common';
import { AuditLog } from '../../kernel/audit.js';
import { BrokerModule } from '../../messaging/broker/broker.module.js';
import { AuditController } from './audit.controller.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

// Global: every feature injects the kernel's `AuditLog` port without importing this module.
@Global()
@Module({
  imports: [BrokerModule],
  controllers: [AuditController],
  providers: [AuditRepository, AuditService, { provide: AuditLog, useExisting: AuditService }],
  exports: [AuditLog, AuditService],
})
export class AuditModule {}
