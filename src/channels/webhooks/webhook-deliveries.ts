import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { auditTopic } from '../../delivery/broker/topics.js';
import { NotificationService } from '../../delivery/notification/notification.service.js';
import { JobQueue } from '../../delivery/queue/job-queue.js';
import { StoreService } from '../../identity/store/store.service.js';
import { AuditLog } from '../../kernel/audit.js';
import { OnDomainEvent, type DomainEvent } from '../../kernel/domain-events.js';
import type { TemplateSetting } from '../../kernel/templates.settings.js';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { BRIDGED_EVENTS, EventBridge } from '../events/event-bridge.js';
import type { WebhookDeliveryEntity, WebhookEndpointEntity } from './webhook.entity.js';
import { WebhookRepository, type NewDelivery } from './webhook.repository.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhookService } from './webhook.service.js';
import { auditTopicOf, subscribes, TEST_TOPIC } from './webhook-topics.js';

// The queue of delivery ids (BullMQ on Redis, in process otherwise), bound by WebhookModule.
export const WEBHOOK_QUEUE = Symbol('WEBHOOK_QUEUE');

// After the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (each up to 10 % later).
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
const JITTER = 0.1;
// Attempts of one endpoint under way in this process at once; more wait (a slow endpoint holds
// its own deliveries back, never another's).
const PER_ENDPOINT = 4;
const BUSY_RETRY_MS = 500;
// Due deliveries are looked for this often; at most this many are queued in this process at
// once (a burst waits in the table, not in memory).
const SWEEP_EVERY_MS = 1_000;
const SWEEP_BATCH = 200;
const MAX_QUEUED = 5_000;
const DEPTH_EVERY_MS = 100;

const DISABLED_TEMPLATE = 'webhookDisabled';
const DISABLED_TEMPLATES: TemplateSetting[] = [
  {
    templateName: DISABLED_TEMPLATE,
    channel: 'email',
    language: 'en',
    subject: 'A webhook endpoint of {{store.fullname}} was disabled',
    body: '<p>Hello{{#if user.fullname}} {{user.fullname}}{{/if}},</p><p>The webhook endpoint {{url}} of {{store.fullname}} was disabled: {{why}}. Events are no longer sent to it. Fix it, then enable it again.</p>',
  },
  { templateName: DISABLED_TEMPLATE, channel: 'inApp', language: 'en', subject: 'A webhook endpoint was disabled', body: 'The webhook endpoint {{url}} was disabled: {{why}}.' },
];
const WHY = { gone: 'it answered 410 Gone', failing: 'its deliveries failed for days' } as const;

// Delivers a store's events to its endpoints, at least once. An event becomes one delivery row
// per subscribed endpoint, written before the event counts as handed over (the outbox delivers
// it again otherwise, and the row's (endpoint, event) key makes that a no-op); the rows are the
// truth, the queue only spreads the attempts over the replicas, and a sweep queues what is due
// (retries, and what a process that died held). Every attempt of an event carries its
// `webhook-id`.
@Injectable()
export class WebhookDeliveries implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly sender = new WebhookSender();
  private readonly busy = new Map<string, number>();
  private sweepTimer?: NodeJS.Timeout;
  private sweeping = false;
  private sweepRun: Promise<number> | undefined;
  private closing = false;
  private stopAudit?: () => void;
  private depth = 0;
  private depthAt = -Infinity;

  constructor(
    private readonly repo: WebhookRepository,
    private readonly webhooks: WebhookService,
    private readonly bridge: EventBridge,
    private readonly stores: StoreService,
    private readonly publisher: EventPublisher,
    private readonly notifications: NotificationService,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    @Inject(WEBHOOK_QUEUE) private readonly queue: JobQueue,
  ) {}

  onModuleInit(): void {
    this.notifications.addDefaultTemplates(DISABLED_TEMPLATES);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.webhooks.settings.enabled) return;
    // Audit entries reach the broker from the process that wrote them, once written.
    const prefix = auditTopic(this.publisher.service, '');
    this.stopAudit = this.publisher.onPublished((topic, data) => {
      if (topic.startsWith(prefix)) void this.auditEntry(data).catch((err: unknown) => this.logger.warn({ err, topic }, 'audit entry not handed to webhooks'));
    });
    await this.queue.start((id) => this.run(id));
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweepTimer.unref();
  }

  // A sweep under way finishes before anything closes (the queue, the database): it would fail,
  // and say so, after the process said it was shutting down. None starts after.
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweepTimer);
    await this.sweepRun;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopAudit?.();
    await this.queue.close();
    this.sender.close();
  }

  // How long a delivery stays with the process that took it: twice an attempt's limit and a margin.
  private get leaseMs(): number {
    return this.webhooks.settings.timeoutMs * 2 + 5_000;
  }

  @OnDomainEvent(...BRIDGED_EVENTS)
  async domainEvent(event: DomainEvent<(typeof BRIDGED_EVENTS)[number]>): Promise<void> {
    if (!this.webhooks.settings.enabled) return;
    const endpoints = await this.repo.enabledEndpoints(event.storeId);
    if (!endpoints.length) return;
    for (const [i, { object, verb, data }] of (await this.bridge.apiEventsOf(event)).entries()) {
      const { _owner, ...shown } = data;
      await this.fanOut(event.storeId, endpoints, i === 0 ? event.id : `${event.id}.${i}`, `${object}-${verb}`, shown);
    }
  }

  private async auditEntry(data: Record<string, unknown>): Promise<void> {
    const entry = data.entry as { id: string; action: string } | undefined;
    const storeId = data.storeId;
    if (!entry || typeof storeId !== 'string') return;
    const endpoints = await this.repo.enabledEndpoints(storeId);
    if (endpoints.length) await this.fanOut(storeId, endpoints, entry.id, auditTopicOf(entry.action), entry as unknown as Record<string, unknown>);
  }

  // One delivery per subscribed endpoint, taken by this process for its first attempt now
  // (queued at once unless this process holds enough already; the sweep queues it then).
  private async fanOut(storeId: string, endpoints: readonly WebhookEndpointEntity[], eventId: string, topic: string, data: Record<string, unknown>): Promise<void> {
    const subscribed = endpoints.filter((e) => subscribes(e.topics, topic));
    if (!subscribed.length) return;
    const body = await this.body(storeId, topic, data);
    const now = this.clock.now();
    const room = (await this.queuedRecently()) < MAX_QUEUED;
    const nextAttemptAt = room ? new Date(now.getTime() + this.leaseMs) : now;
    const rows: NewDelivery[] = subscribed.map((e) => ({ id: randomUUID(), endpointId: e.id, eventId, topic, body, nextAttemptAt }));
    const written = await this.repo.insertDeliveries(storeId, rows);
    if (room) for (const id of written) await this.queue.enqueue(id);
  }

  // The queue's depth, asked at most every DEPTH_EVERY_MS (with BullMQ each ask is a round trip to
  // Redis); the jobs queued since are counted on top.
  private async queuedRecently(): Promise<number> {
    const now = performance.now();
    if (now - this.depthAt > DEPTH_EVERY_MS) {
      this.depthAt = now;
      this.depth = await this.queue.depth();
    } else this.depth++;
    return this.depth;
  }

  private async body(storeId: string, topic: string, data: Record<string, unknown>): Promise<string> {
    const store = await this.stores.findById(storeId);
    return JSON.stringify({ type: topic, timestamp: this.clock.now().toISOString(), storeId, storeCodename: store?.codename ?? null, data });
  }

  // `POST .../test`: a `webhook.test` event for this endpoint, attempted now.
  async sendTest(endpoint: WebhookEndpointEntity): Promise<WebhookDeliveryEntity> {
    const body = await this.body(endpoint.storeId, TEST_TOPIC, { webhookId: endpoint.id, message: 'a test event, sent on request' });
    const [id] = await this.repo.insertDeliveries(endpoint.storeId, [{ id: randomUUID(), endpointId: endpoint.id, eventId: `msg_${randomUUID()}`, topic: TEST_TOPIC, body, nextAttemptAt: new Date(this.clock.now().getTime() + this.leaseMs) }]);
    return this.attempt(id);
  }

  // `POST .../deliveries/:id/retry`: one more attempt now, whatever its state.
  async retry(delivery: WebhookDeliveryEntity): Promise<WebhookDeliveryEntity> {
    await this.repo.takeNow(delivery.storeId, delivery.id, this.clock.now(), this.leaseMs);
    return this.attempt(delivery.id);
  }

  // Queues what is due: retries whose time came, and deliveries a process took and did not
  // finish (its lease ended). One sweep at a time per process.
  sweep(): Promise<number> {
    if (this.sweeping || this.closing) return Promise.resolve(0);
    this.sweepRun = this.sweepOnce();
    return this.sweepRun;
  }

  private async sweepOnce(): Promise<number> {
    this.sweeping = true;
    try {
      const room = MAX_QUEUED - (await this.queue.depth());
      if (room <= 0) return 0;
      const ids = await this.repo.claimDue(this.clock.now(), this.leaseMs, Math.min(room, SWEEP_BATCH), this.busyEndpoints());
      for (const id of ids) await this.queue.enqueue(id);
      return ids.length;
    } catch (err) {
      this.logger.warn({ err }, 'due webhook deliveries not queued: tried again at the next sweep');
      return 0;
    } finally {
      this.sweeping = false;
    }
  }

  // A queued job: one attempt of a pending delivery.
  private async run(id: string): Promise<void> {
    const delivery = await this.repo.findForAttempt(id);
    if (delivery?.status === 'pending') await this.tryOnce(delivery, false);
  }

  // One attempt, asked for (a retry or a test): made whatever the delivery's state; answers it.
  async attempt(id: string, asked = true): Promise<WebhookDeliveryEntity> {
    const delivery = await this.repo.findForAttempt(id);
    if (!delivery) throw new Error(`no webhook delivery ${id}`);
    await this.tryOnce(delivery, asked);
    return (await this.repo.findForAttempt(id)) ?? delivery;
  }

  // Endpoints with all of this process's slots in use: the sweep leaves their deliveries alone.
  private busyEndpoints(): string[] {
    return [...this.busy].filter(([, running]) => running >= PER_ENDPOINT).map(([id]) => id);
  }

  // Never throws: the outcome is the row's. A delivery whose endpoint has every slot in use is
  // put back, untried, for when one is free (the sweep passes over such endpoints meanwhile).
  private async tryOnce(delivery: WebhookDeliveryEntity, asked: boolean): Promise<void> {
    const { id } = delivery;
    const endpoint = await this.repo.findEndpoint(delivery.storeId, delivery.endpointId);
    if (!endpoint) return;
    const now = this.clock.now();
    if (!endpoint.enabled && !asked) {
      await this.repo.recordAttempt(id, { status: 'failed', responseStatus: null, responseBody: null, error: 'the endpoint is disabled', durationMs: 0, at: now, nextAttemptAt: null });
      return;
    }
    const running = this.busy.get(endpoint.id) ?? 0;
    if (running >= PER_ENDPOINT && !asked) {
      await this.repo.postpone(id, new Date(now.getTime() + BUSY_RETRY_MS));
      return;
    }
    this.busy.set(endpoint.id, running + 1);
    try {
      const { timeoutMs, allowPrivateNetworks } = this.webhooks.settings;
      const result = await this.sender.send({ url: endpoint.url, id: delivery.eventId, body: delivery.body, timestamp: now, secrets: this.webhooks.signingSecrets(endpoint), timeoutMs, allowPrivateNetworks });
      const ok = result.status !== null && result.status >= 200 && result.status < 300;
      const attempts = delivery.attempts + 1;
      const retryIn = RETRY_DELAYS_MS[attempts - 1];
      const gone = result.status === 410;
      const status = ok ? 'delivered' : gone || retryIn === undefined ? 'failed' : 'pending';
      const at = this.clock.now();
      await this.repo.recordAttempt(id, {
        status,
        responseStatus: result.status,
        responseBody: result.body,
        error: result.error,
        durationMs: result.durationMs,
        at,
        nextAttemptAt: status === 'pending' ? new Date(at.getTime() + Math.round(retryIn! * (1 + Math.random() * JITTER))) : null,
      });
      if (gone) await this.disable(endpoint, 'gone');
      else {
        const failingSince = await this.repo.noteOutcome(endpoint.storeId, endpoint.id, ok, at);
        if (failingSince && at.getTime() - failingSince.getTime() >= this.webhooks.settings.disableAfterFailingDays * DAY_MS) await this.disable(endpoint, 'failing');
      }
    } catch (err) {
      this.logger.error({ err, deliveryId: id }, 'webhook attempt not recorded: the delivery is tried again when its lease ends');
    } finally {
      const left = (this.busy.get(endpoint.id) ?? 1) - 1;
      if (left) this.busy.set(endpoint.id, left);
      else this.busy.delete(endpoint.id);
    }
  }

  // Disabled by the service: its pending deliveries fail, the audit log says why, the store's
  // owner is told.
  private async disable(endpoint: WebhookEndpointEntity, reason: keyof typeof WHY): Promise<void> {
    if (!(await this.repo.disable(endpoint.storeId, endpoint.id, reason))) return;
    await this.repo.failPending(endpoint.storeId, endpoint.id, `the endpoint was disabled: ${WHY[reason]}`);
    this.logger.warn({ storeId: endpoint.storeId, webhookId: endpoint.id, reason }, 'webhook endpoint disabled');
    await this.audit.record({ storeId: endpoint.storeId, action: 'webhook.disabled', outcome: 'success', reason, actor: { type: 'system', id: null }, target: { type: 'webhook', id: endpoint.id }, details: { url: endpoint.url } });
    const store = await this.stores.findById(endpoint.storeId);
    if (!store?.ownerId) return;
    for (const channel of ['email', 'inApp'] as const) {
      if (!this.notifications.hasChannel(channel) || !this.notifications.hasTemplate(DISABLED_TEMPLATE, channel)) continue;
      await this.notifications
        .send({ storeId: store.id, channel, template: DISABLED_TEMPLATE, userId: store.ownerId, contextVars: { url: endpoint.url, why: WHY[reason] } })
        .catch((err: unknown) => this.logger.warn({ err, channel }, 'the store owner was not told of a disabled webhook endpoint'));
    }
  }
}
