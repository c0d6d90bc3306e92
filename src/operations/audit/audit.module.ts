import { Global, Module } from '@nestjs/common';
import { SigningKeyModule } from '../../identity/signing-key/signing-key.module.js';
import { AuditLog } from '../../kernel/audit.js';
import { BrokerModule } from '../../delivery/broker/broker.module.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { AuditCheckpointService } from './audit-checkpoint.service.js';
import { AuditChainKeys } from './audit-keys.js';
import { AuditController } from './audit.controller.js';
import { AuditPublisherService } from './audit-publisher.service.js';
import { AuditQueryService } from './audit-query.service.js';
import { AuditRecorderService } from './audit-recorder.service.js';
import { AuditRetentionService } from './audit-retention.service.js';
import { AuditVerificationService } from './audit-verification.service.js';
import { AuditRepository } from './audit.repository.js';

// Global: every feature injects the kernel's `AuditLog` port without importing this module, and
// the overview reads the sign-in series through `AuditQueryService`. The signing-key feature's
// `KeyService` signs the chain's checkpoints.
@Global()
@Module({
  imports: [BrokerModule, SigningKeyModule],
  controllers: [AuditController],
  providers: [
    { provide: AuditChainKeys, inject: [AppConfig], useFactory: (config: AppConfig) => AuditChainKeys.fromEnv(config.env) },
    AuditRepository,
    AuditCheckpointService,
    AuditPublisherService,
    AuditRecorderService,
    AuditRetentionService,
    AuditQueryService,
    AuditVerificationService,
    { provide: AuditLog, useExisting: AuditRecorderService },
  ],
  exports: [AuditLog, AuditQueryService],
})
export class AuditModule {}
