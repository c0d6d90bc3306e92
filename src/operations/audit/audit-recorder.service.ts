import { randomUUID } from 'node:crypto';
import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { AuditLog, type AuditContext, type AuditInput } from '../../kernel/audit.js';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { afterCommit, type Tx } from '../../platform/database/transactions.js';
import { AuditCheckpointService } from './audit-checkpoint.service.js';
import { AuditChainKeys } from './audit-keys.js';
import { AuditPublisherService } from './audit-publisher.service.js';
import { AuditRepository, type NewAuditEntry } from './audit.repository.js';
import { AuditLogSection } from './audit.settings.js';

const FLUSH_EVERY_MS = 200;
const FLUSH_AT_ENTRIES = 100;
const RETRY_AFTER_MS = 2_000;
const RETRY_LIMIT = 100_000;

interface QueuedEntry {
  storeId: string;
  entry: NewAuditEntry;
}

// Recording: the kernel's `AuditLog` port. An entry is appended to its store's chain, in the
// change's transaction or from a queue written in batches; once written it is published on the
// broker and counted towards the store's next checkpoint.
@Injectable()
export class AuditRecorderService extends AuditLog implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private queue: QueuedEntry[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly entries: AuditRepository,
    private readonly keys: AuditChainKeys,
    private readonly checkpoints: AuditCheckpointService,
    private readonly publisher: AuditPublisherService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly logger: PinoLogger,
  ) {
    super();
    logger.setContext('AuditLog');
  }

  get enabled(): boolean {
    return this.config.section(AuditLogSection).auditLog.enabled;
  }

  // With a transaction: written in it. Without: queued, written within ~200 ms in batches.
  async record(input: AuditInput, context: AuditContext = {}, tx?: Tx): Promise<void> {
    if (!this.enabled) return;
    const entry = this.toEntry(input, context);
    if (tx) {
      const written = await this.entries.append(input.storeId, [entry], tx);
      // Published (and anchored) once the change and its entry are committed; never for a rolled-back one.
      afterCommit(tx, () => {
        this.publisher.publish(written);
        this.checkpoints.note(input.storeId, written.length);
      });
      return;
    }
    this.queue.push({ storeId: input.storeId, entry });
    if (this.queue.length >= FLUSH_AT_ENTRIES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
  }

  // Writes what is queued, one transaction per store; flushes run one after another.
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    this.flushing = this.flushing.then(() => this.write(batch));
    return this.flushing;
  }

  onApplicationBootstrap(): void {
    if (this.enabled && this.keys.current.development) {
      this.logger.warn('KEY_ENCRYPTION_SECRET is not set: the audit log\'s chain is keyed with the fixed development key, so whoever can write to the database can rewrite it unseen');
    }
  }

  // Nothing queued is lost on a graceful shutdown: what is queued is written before the HTTP
  // server closes, and again once the requests it was still answering are done (Nest closes the
  // server between the two hooks, and the database after this module's shutdown hook).
  // The newest entries are anchored too: checkpoints while the broker still publishes them, and
  // again for the entries of the requests answered last.
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
    await this.checkpoints.run();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    clearTimeout(this.timer);
    if (this.queue.length) this.logger.error({ lost: this.queue.length }, 'audit entries lost at shutdown: the database refused them');
    await this.checkpoints.run();
  }

  // A store's entries that could not be written (the database away) go back to the queue and
  // are tried again with the next flush, in their order, up to RETRY_LIMIT entries held; past
  // that the oldest are dropped and the log says how many.
  private async write(batch: QueuedEntry[]): Promise<void> {
    const byStore = new Map<string, NewAuditEntry[]>();
    for (const { storeId, entry } of batch) {
      const entries = byStore.get(storeId);
      if (entries) entries.push(entry);
      else byStore.set(storeId, [entry]);
    }
    const failed: QueuedEntry[] = [];
    for (const [storeId, entries] of byStore) {
      try {
        this.publisher.publish(await this.entries.append(storeId, entries));
        this.checkpoints.note(storeId, entries.length);
      } catch (err) {
        this.logger.warn({ err, storeId, entries: entries.length }, 'audit entries could not be written: kept for the next flush');
        failed.push(...entries.map((entry) => ({ storeId, entry })));
      }
    }
    if (!failed.length) return;
    this.queue = [...failed, ...this.queue];
    const dropped = this.queue.length - RETRY_LIMIT;
    if (dropped > 0) {
      this.queue.splice(0, dropped);
      this.logger.error({ lost: dropped }, 'audit entries lost: the database refused them for too long');
    }
    this.timer ??= setTimeout(() => void this.flush(), RETRY_AFTER_MS);
  }

  private toEntry(input: AuditInput, context: AuditContext): NewAuditEntry {
    return {
      id: randomUUID(),
      at: this.clock.now(),
      action: input.action,
      outcome: input.outcome,
      reason: input.reason ?? null,
      actorType: input.actor.type,
      actorId: input.actor.id,
      actorRoleId: input.actor.roleId ?? null,
      targetType: input.target?.type ?? null,
      targetId: input.target?.id ?? null,
      ip: clip(context.ip, 100),
      userAgent: clip(context.userAgent, 500),
      requestId: clip(context.requestId, 200),
      sessionId: clip(context.sessionId, 200),
      // As jsonb gives it back (no undefined, dates as strings): what the hash covers.
      details: input.details ? (JSON.parse(JSON.stringify(input.details)) as Record<string, unknown>) : null,
    };
  }
}

function clip(value: string | null | undefined, max: number): string | null {
  return value ? value.slice(0, max) : null;
}
