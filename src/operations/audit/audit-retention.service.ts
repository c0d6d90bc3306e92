import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { AuditRepository } from './audit.repository.js';
import { AuditLogSection } from './audit.settings.js';

const SWEEP_EVERY_MS = 3_600_000;
const SWEEP_BATCH = 5_000;

// The retention (settings auditLog.retentionDays): entries and checkpoints older than it are
// deleted every hour, and the chain's check starts from what is kept.
@Injectable()
export class AuditRetentionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly entries: AuditRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('AuditLog');
  }

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => void this.sweep().catch((err: unknown) => this.logger.warn({ err }, 'audit retention sweep failed')), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }

  // Deletes entries past the retention, a batch per statement, and the checkpoints of such
  // entries; how many entries went.
  async sweep(): Promise<number> {
    const before = this.retainedSince();
    let total = 0;
    for (;;) {
      const n = await this.entries.deleteOlderThan(before, SWEEP_BATCH);
      total += n;
      if (n < SWEEP_BATCH) break;
    }
    while ((await this.entries.deleteCheckpointsOlderThan(before, SWEEP_BATCH)) === SWEEP_BATCH);
    return total;
  }

  // The oldest instant the retention keeps.
  retainedSince(): Date {
    return new Date(this.clock.now().getTime() - this.config.section(AuditLogSection).auditLog.retentionDays * DAY_MS);
  }
}
