import { Global, Module } from '@nestjs/common';
import { SigningKeyModule } from '../../identity/signing-key/signing-key.module.js';
import { AuditLog } from '../../kernel/audit.js';
import { BrokerModule } from '../../delivery/broker/broker.module.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { AuditCheckpointService } from './audit-checkpoint.service.js';
import { AuditChainKeys } from './audit-keys.js';
import { AuditController } from './audit.controller.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

// Global: every feature injects the kernel's `AuditLog` port without importing this module.
// The signing-key feature's `KeyService` signs the chain's checkpoints.
@Global()
@Module({
  imports: [BrokerModule, SigningKeyModule],
  controllers: [AuditController],
  providers: [
    { provide: AuditChainKeys, inject: [AppConfig], useFactory: (config: AppConfig) => AuditChainKeys.fromEnv(config.env) },
    AuditRepository,
    AuditCheckpointService,
    AuditService,
    { provide: AuditLog, useExisting: AuditService },
  ],
  exports: [AuditLog, AuditService],
})
export class AuditModule {}
