import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Clock } from '../../platform/clock/clock.js';
import { OidcPayloadRepository } from './oidc-payload.repository.js';

const SWEEP_EVERY_MS = 5 * 60_000;
const SWEEP_BATCH = 1_000;
// At most this many batches a sweep: what is left waits for the next one.
const SWEEP_MAX_BATCHES = 50;

// The provider's expired rows (interactions, sessions, codes, tokens, grants) are read as missing
// already; they are deleted every few minutes, a batch per statement, by whichever replicas run
// (as the audit log's retention and the outbox's pruning).
@Injectable()
export class OidcPayloadSweep implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OidcProvider');
  private sweeper?: NodeJS.Timeout;
  private sweeping?: Promise<number>;

  constructor(
    private readonly payloads: OidcPayloadRepository,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.sweeping;
  }

  // How many rows went. One sweep at a time per process.
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepBatches()
      .catch((err: unknown) => {
        this.logger.warn({ err }, 'expired OpenID Connect provider rows not swept: tried again at the next sweep');
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepBatches(): Promise<number> {
    const now = this.clock.now();
    let total = 0;
    for (let i = 0; i < SWEEP_MAX_BATCHES; i++) {
      const n = await this.payloads.deleteExpired(now, SWEEP_BATCH);
      total += n;
      if (n < SWEEP_BATCH) break;
    }
    return total;
  }
}
