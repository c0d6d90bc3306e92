import { Injectable, Logger, Optional, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { AppConfig } from '../platform/config/app-config.js';
import { Outbox, type OutboxRow } from '../platform/database/outbox.js';
import { DomainEventSection } from './domain-events.settings.js';

// The metadata `@OnDomainEvent` (domain-events.ts) puts on a listener method: the event names.
export const LISTENS_TO = 'domain-events:listens-to';

// An event as listeners get it (DomainEvent in domain-events.ts is the typed view).
export type DeliveredEvent = OutboxRow;

// What holds delivery while it says so: the writer's delivery after the commit and the sweeps
// both leave the events in the outbox. No module of the service binds it; a test process does
// (test/fixtures/outbox-service.ts), to be killed between a commit and the delivery.
export abstract class DispatchHold {
  abstract held(): boolean;
}

export interface Listener {
  // `Class.method`, for the log.
  name: string;
  handle: (event: DeliveredEvent) => unknown;
}

// Rows a sweep claims at once.
const SWEEP_BATCH = 100;
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 5_000;
// Delivered ids are marked in one statement per this many milliseconds at most.
const MARK_AFTER_MS = 20;
// How long a shutdown waits for the deliveries under way.
const SHUTDOWN_WAIT_MS = 5_000;

// Delivers the outbox's events to the `@OnDomainEvent` listeners of every module: at once after
// the commit of the transaction that wrote them (the fast path, in the writer's process), and
// from a sweep at boot and every `domainEvents.sweepSeconds` for those no one delivered (the
// writer died, or a listener failed). At least once: an event is delivered again until every
// listener took it without throwing, so listeners are idempotent (the event's `id` is the same
// on every delivery). Delivered events are pruned after `domainEvents.retentionHours`.
@Injectable()
export class DomainEventDispatcher implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DomainEvents');
  private readonly listeners = new Map<string, Listener[]>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private delivered: string[] = [];
  private markTimer?: NodeJS.Timeout;
  private marking: Promise<void> = Promise.resolve();
  private sweepTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private sweeping?: Promise<number>;
  private stopped = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Optional() private readonly hold?: DispatchHold,
  ) {}

  // Every provider's listener methods (the instances exist once the modules are built), each
  // instance once (an alias, `useExisting`, names one already seen).
  onModuleInit(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic() || seen.has(instance)) continue;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        if (typeof instance[method] !== 'function') continue;
        const names = Reflect.getMetadata(LISTENS_TO, instance[method] as object) as string[] | undefined;
        if (!names) continue;
        const listener = { name: `${instance.constructor.name}.${method}`, handle: (instance[method] as (e: DeliveredEvent) => unknown).bind(instance) };
        for (const name of names) this.listen(name, listener);
      }
    }
  }

  // A listener added while the service runs; the function returned removes it.
  listen(name: string, listener: Listener): () => void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener]);
    return () => this.listeners.set(name, (this.listeners.get(name) ?? []).filter((l) => l !== listener));
  }

  onApplicationBootstrap(): void {
    const { sweepSeconds } = this.config.section(DomainEventSection).domainEvents;
    void this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), sweepSeconds * 1000);
    this.sweepTimer.unref();
    this.pruneTimer = setInterval(() => void this.prune().catch((err: unknown) => this.logger.warn({ err }, 'delivered domain events not pruned')), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  // The deliveries under way finish (the broker is still open) and their marks are written.
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    clearInterval(this.pruneTimer);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)));
    await Promise.race([Promise.all([this.sweeping, ...this.inFlight]), waited]);
    clearTimeout(timer);
    await this.flushMarks();
  }

  // The fast path: events whose transaction has just committed, delivered by their writer.
  // Nothing waits for it; what fails stays in the outbox for a sweep.
  deliverCommitted(events: readonly DeliveredEvent[]): void {
    if (this.hold?.held()) return;
    for (const event of events) {
      const delivery = this.deliver(event).then((ok) => {
        if (ok) this.markSoon(event.id);
      });
      this.inFlight.add(delivery);
      void delivery.finally(() => this.inFlight.delete(delivery));
    }
  }

  // Takes the events no one holds any more (a batch at a time, until none is left) and delivers
  // them; how many were delivered. One sweep at a time per process.
  sweep(): Promise<number> {
    if (this.stopped || this.hold?.held()) return Promise.resolve(0);
    this.sweeping ??= this.sweepAll()
      .catch((err: unknown) => {
        this.logger.warn({ err }, 'domain events not swept: tried again at the next sweep');
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepAll(): Promise<number> {
    const { leaseSeconds } = this.config.section(DomainEventSection).domainEvents;
    let total = 0;
    for (;;) {
      const rows = await this.outbox.claim(leaseSeconds, SWEEP_BATCH);
      const ok = await Promise.all(rows.map((row) => this.deliver(row)));
      const done = rows.filter((_, i) => ok[i]).map((r) => r.id);
      await this.outbox.markDispatched(done);
      total += done.length;
      if (rows.length < SWEEP_BATCH || this.stopped || this.hold?.held()) return total;
    }
  }

  // Deletes the events delivered longer ago than the retention; how many went.
  async prune(): Promise<number> {
    const { retentionHours } = this.config.section(DomainEventSection).domainEvents;
    let total = 0;
    for (;;) {
      const n = await this.outbox.prune(retentionHours, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }

  // Every listener of the event, side by side; whether all of them took it.
  private async deliver(event: DeliveredEvent): Promise<boolean> {
    const listeners = this.listeners.get(event.name) ?? [];
    const results = await Promise.allSettled(listeners.map(async (l) => l.handle(event)));
    let ok = true;
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') return;
      ok = false;
      this.logger.error({ err: result.reason, event: event.name, eventId: event.id, listener: listeners[i].name }, 'domain event listener failed: the event is delivered again later');
    });
    return ok;
  }

  private markSoon(id: string): void {
    this.delivered.push(id);
    if (this.markTimer) return;
    this.markTimer = setTimeout(() => void this.flushMarks(), MARK_AFTER_MS);
    this.markTimer.unref();
  }

  // A mark that cannot be written leaves its events to a sweep, which delivers them again.
  private flushMarks(): Promise<void> {
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    const ids = this.delivered;
    this.delivered = [];
    this.marking = this.marking.then(() =>
      this.outbox.markDispatched(ids).catch((err: unknown) => this.logger.warn({ err, events: ids.length }, 'delivered domain events not marked: a sweep delivers them again')),
    );
    return this.marking;
  }
}
