import { randomUUID } from 'node:crypto';
import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { AuditLog, type AuditContext, type AuditInput } from '../../kernel/audit.js';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { auditTopic } from '../../delivery/broker/topics.js';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { afterCommit, type Tx } from '../../platform/database/transactions.js';
import { chainHash, keyedChainHash } from './audit-chain.js';
import { AuditCheckpointService, type AnchorCheck } from './audit-checkpoint.service.js';
import { AuditChainKeys } from './audit-keys.js';
import { toAuditEntryResponse, type AuditBrokenReason } from './audit.dto.js';
import type { AuditEntryEntity } from './audit.entity.js';
import { AuditRepository, type AuditFilter, type AuditPosition, type NewAuditEntry } from './audit.repository.js';
import { AuditLogSection } from './audit.settings.js';

const FLUSH_EVERY_MS = 200;
const FLUSH_AT_ENTRIES = 100;
const SWEEP_EVERY_MS = 3_600_000;
const SWEEP_BATCH = 5_000;
const VERIFY_PAGE = 1_000;
const RETRY_AFTER_MS = 2_000;
const RETRY_LIMIT = 100_000;
const HOUR_MS = 3_600_000;
const SUCCEEDED = 'user.login.succeeded';
const FAILED = 'user.login.failed';

interface QueuedEntry {
  storeId: string;
  entry: NewAuditEntry;
}

// Sign-ins of a period starting at `from` (an ISO instant, UTC).
export interface SignInBucket {
  from: string;
  succeeded: number;
  failed: number;
}

export interface SignInSeries {
  // The last 24 hours by the hour, oldest first: the current hour last.
  last24h: SignInBucket[];
  // The last 7 days by the day (UTC), oldest first: today last.
  last7d: SignInBucket[];
}

export interface ChainCheck extends AnchorCheck {
  verified: number;
  firstBrokenId: string | null;
  firstBrokenReason: AuditBrokenReason | null;
}

// How much an entry's hash proves, from none to all: unkeyed (SHA-256), the development key,
// a secret's key. A chain never goes down this scale: whoever can write the table could
// otherwise rewrite what follows a keyed entry as unkeyed.
const UNKEYED = 0;
const DEVELOPMENT_KEY = 1;
const SECRET_KEY = 2;

@Injectable()
export class AuditService extends AuditLog implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private queue: QueuedEntry[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly entries: AuditRepository,
    private readonly keys: AuditChainKeys,
    private readonly checkpoints: AuditCheckpointService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly publisher: EventPublisher,
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
        this.publish(written);
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
    this.sweeper = setInterval(() => void this.sweep().catch((err: unknown) => this.logger.warn({ err }, 'audit retention sweep failed')), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  // Nothing queued is lost on a graceful shutdown: what is queued is written before the HTTP
  // server closes, and again once the requests it was still answering are done (Nest closes the
  // server between the two hooks, and the database after this module's shutdown hook).
  // The newest entries are anchored too: checkpoints while the broker still publishes them, and
  // again for the entries of the requests answered last.
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.flush();
    await this.checkpoints.run();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    clearTimeout(this.timer);
    if (this.queue.length) this.logger.error({ lost: this.queue.length }, 'audit entries lost at shutdown: the database refused them');
    await this.checkpoints.run();
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

  private retainedSince(): Date {
    return new Date(this.clock.now().getTime() - this.config.section(AuditLogSection).auditLog.retentionDays * DAY_MS);
  }

  page(storeId: string, filter: AuditFilter, position: AuditPosition | undefined, limit: number): Promise<AuditEntryEntity[]> {
    return this.entries.page(storeId, filter, position, limit);
  }

  count(storeId: string, filter: AuditFilter): Promise<number> {
    return this.entries.count(storeId, filter);
  }

  // The store's sign-ins (user.login.succeeded) and refused ones (user.login.failed) per hour
  // over the last 24 hours and per day over the last 7, from the service's clock (periods in
  // UTC, the current one included). Counted by the database from the action index; a period
  // without entries is 0. Entries still queued (up to ~200 ms) are not counted yet.
  async signIns(storeId: string): Promise<SignInSeries> {
    const now = this.clock.now().getTime();
    const hour = Math.floor(now / HOUR_MS) * HOUR_MS;
    const day = Math.floor(now / DAY_MS) * DAY_MS;
    const series = async (unit: 'hour' | 'day', size: number, last: number, count: number) => {
      const from = last - (count - 1) * size;
      const rows = await this.entries.countPerPeriod(storeId, [SUCCEEDED, FAILED], unit, new Date(from), new Date(last + size));
      const buckets = Array.from({ length: count }, (_, i) => ({ from: new Date(from + i * size).toISOString(), succeeded: 0, failed: 0 }));
      for (const row of rows) {
        const bucket = buckets[Math.round((new Date(row.from).getTime() - from) / size)];
        if (!bucket) continue;
        if (row.action === SUCCEEDED) bucket.succeeded += row.count;
        else bucket.failed += row.count;
      }
      return buckets;
    };
    const [last24h, last7d] = await Promise.all([series('hour', HOUR_MS, hour, 24), series('day', DAY_MS, day, 7)]);
    return { last24h, last7d };
  }

  // Walks the store's chain in order. The first entry kept is trusted as the anchor (older
  // ones may have gone with the retention); from there each must link to the one before and
  // hash to its stored hash: an HMAC under the chain key it names, or for entries written before
  // the chain was keyed, SHA-256. Then the newest checkpoint's entry must still be there as it was.
  async verify(storeId: string): Promise<ChainCheck> {
    const [chain, anchor] = await Promise.all([this.walk(storeId), this.checkpoints.check(storeId, this.retainedSince())]);
    return { ...chain, ...anchor };
  }

  private async walk(storeId: string): Promise<Pick<ChainCheck, 'verified' | 'firstBrokenId' | 'firstBrokenReason'>> {
    let verified = 0;
    let prev: AuditEntryEntity | undefined;
    let strongest = UNKEYED;
    const broken = (row: AuditEntryEntity, reason: AuditBrokenReason) => ({ verified, firstBrokenId: row.id, firstBrokenReason: reason });
    for (;;) {
      const rows = await this.entries.chainPage(storeId, prev?.seq ?? '0', VERIFY_PAGE);
      for (const row of rows) {
        const linked = prev ? row.prevHash === prev.hash && BigInt(row.seq) === BigInt(prev.seq) + 1n : row.seq !== '1' || row.prevHash === null;
        if (!linked) return broken(row, 'unlinked');
        const key = row.keyId === null ? undefined : this.keys.get(row.keyId);
        if (row.keyId !== null && !key) return broken(row, 'unknownKey');
        const strength = !key ? UNKEYED : key.development ? DEVELOPMENT_KEY : SECRET_KEY;
        if (strength < strongest) return broken(row, 'downgraded');
        if ((key ? keyedChainHash(key.key, row.prevHash, row) : chainHash(row.prevHash, row)) !== row.hash) return broken(row, 'edited');
        strongest = strength;
        verified++;
        prev = row;
      }
      if (rows.length < VERIFY_PAGE) return { verified, firstBrokenId: null, firstBrokenReason: null };
    }
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
        this.publish(await this.entries.append(storeId, entries));
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

  // `<service>-audit-<action with dots as dashes>`, with the store for the subscribers' filters.
  private publish(rows: AuditEntryEntity[]): void {
    for (const row of rows) {
      const topic = auditTopic(this.publisher.service, row.action);
      this.publisher.publish(topic, { storeId: row.storeId, entry: toAuditEntryResponse(row) }).catch((err: unknown) => this.logger.warn({ err, topic }, 'audit event not published'));
    }
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
