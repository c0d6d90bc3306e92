import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Broker, type BrokerMessage } from '../../delivery/broker/broker.js';
import { sessionEndedTopic } from '../../delivery/broker/topics.js';
import { Clock } from '../../platform/clock/clock.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { DatabaseNotifications } from '../../platform/database/database-notifications.js';
import type { CallerCredentials } from '../../identity/auth/caller-resolver.js';
import { StoreService } from '../../identity/store/store.service.js';
import { EventAccessService, MessageContext, type Subscriber } from './event-access.service.js';
import { asChannelFailure } from './event-errors.js';
import { EventPrincipals } from './event-principals.js';
import type { CompiledSubscription, CompiledTopic } from './event-subscriptions.js';

// A transport's side of delivery: one payload on one topic to several of its clients at once
// (so it is encoded once for all of them).
export interface EventTransport {
  deliver(topicName: string, payload: Record<string, unknown>, clients: EventClient[]): void;
}

// One subscribed connection (a socket or an SSE stream), whatever carries it.
export interface EventClient {
  readonly id: string;
  readonly subscription: CompiledSubscription;
  readonly transport: EventTransport;
  readonly credentials: CallerCredentials;
  subscriber: Subscriber;
  // Client-facing topic names it holds.
  readonly topics: Set<string>;
  // Sends `error` (this error's message code, errCode and sentence) and ends the connection.
  close(error: AppError): void;
}

// Sessions to check again on every replica: ended (logout, revocation) or changed (roles,
// deactivation, a deleted API key, whose id is its session id).
export interface SessionEndedMessage {
  sessionIds?: string[];
  userIds?: string[];
}

interface Binding {
  client: EventClient;
  topic: CompiledTopic;
}

interface Consumer {
  bindings: Set<Binding>;
  // The broker consumer; resolves once it is positioned.
  started: Promise<() => void>;
}

const SWEEP_MS = 500;
const SHUTTING_DOWN = () => new AppError('ServiceUnavailable', 'the service is shutting down');

// This replica's subscribers and the broker consumers they need: a consumer per broker topic
// starts with its first subscriber here and stops with the last. Every event is shaped per
// subscriber by EventAccessService, then handed to the transports grouped by identical payload.
@Injectable()
export class EventHub implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('EventHub');
  private readonly consumers = new Map<string, Consumer>();
  private readonly clients = new Set<EventClient>();
  // API-key streams being checked again after their validation lapsed.
  private readonly checking = new Set<EventClient>();
  private stopControl: (() => void) | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly broker: Broker,
    private readonly access: EventAccessService,
    private readonly principals: EventPrincipals,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly notifications: DatabaseNotifications,
    private readonly stores: StoreService,
  ) {}

  async onModuleInit(): Promise<void> {
    this.stopControl = await this.broker.subscribe(sessionEndedTopic(this.config.env.SERVICE_CODENAME), (m) => void this.recheck(m.data as SessionEndedMessage));
    // A store's row changed (the database announces every change, SQL included): once the store
    // cache has forgotten it (its listener comes first), a deactivated store loses its streams.
    this.notifications.subscribe('store_changed', { message: (id) => void Promise.resolve().then(() => this.storeChanged(id)), reset: () => undefined });
    // Expired sessions lose their streams without anyone logging out.
    this.sweeper = setInterval(() => this.sweepExpired(), SWEEP_MS);
    this.sweeper.unref();
  }

  // First thing at a shutdown (app.ts), before the requests under way are waited for: every
  // client gets its `error` and connects again elsewhere, and none is taken from then on (a stream
  // left open would be served by this process, with its settings, until it exits).
  shutdown(): void {
    this.stopping = true;
    for (const client of [...this.clients]) client.close(SHUTTING_DOWN());
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  // For a close that did not go through app.ts's (Nest's own, in a test).
  beforeApplicationShutdown(): void {
    this.shutdown();
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
    this.stopControl?.();
  }

  // A client admitted just before the shutdown began is ended at once.
  connect(client: EventClient): void {
    if (this.stopping) return client.close(SHUTTING_DOWN());
    this.clients.add(client);
  }

  // Adds topics the access service allowed; resolves once their consumers run, so the client
  // hears `subscribed` only when events will reach it.
  async add(client: EventClient, topicNames: readonly string[]): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (const name of topicNames) {
      if (client.topics.has(name) || !this.clients.has(client)) continue;
      const topic = client.subscription.topics.get(name)!;
      client.topics.add(name);
      let consumer = this.consumers.get(topic.brokerTopic);
      if (!consumer) {
        const started = this.broker.subscribe(topic.brokerTopic, (m) => this.dispatch(m));
        consumer = { bindings: new Set(), started };
        this.consumers.set(topic.brokerTopic, consumer);
        started.catch((err: unknown) => this.logger.error({ err, topic: topic.brokerTopic }, 'broker consumer failed to start'));
      }
      consumer.bindings.add({ client, topic });
      waits.push(consumer.started);
    }
    await Promise.all(waits);
  }

  remove(client: EventClient, topicNames: readonly string[]): string[] {
    const removed: string[] = [];
    for (const name of topicNames) {
      if (!client.topics.delete(name)) continue;
      removed.push(name);
      const topic = client.subscription.topics.get(name)!;
      const consumer = this.consumers.get(topic.brokerTopic);
      if (!consumer) continue;
      for (const b of consumer.bindings) if (b.client === client && b.topic.name === name) consumer.bindings.delete(b);
      if (!consumer.bindings.size) {
        this.consumers.delete(topic.brokerTopic);
        void consumer.started.then((stop) => stop(), () => undefined);
      }
    }
    return removed;
  }

  disconnect(client: EventClient): void {
    if (!this.clients.delete(client)) return;
    this.remove(client, [...client.topics]);
  }

  // Broker topics this replica consumes for its subscribers.
  activeTopics(): string[] {
    return [...this.consumers.keys()];
  }

  clientCount(): number {
    return this.clients.size;
  }

  private dispatch(message: BrokerMessage): void {
    const consumer = this.consumers.get(message.topic);
    if (!consumer) return;
    const event = new MessageContext(message);
    // transport → topic name → payload → clients: one encoding per distinct payload.
    const groups = new Map<EventTransport, Map<string, Map<Record<string, unknown>, EventClient[]>>>();
    for (const { client, topic } of consumer.bindings) {
      const payload = this.access.shape(client.subscriber, client.subscription, topic, event);
      if (!payload) continue;
      let byTopic = groups.get(client.transport);
      if (!byTopic) groups.set(client.transport, (byTopic = new Map()));
      let byPayload = byTopic.get(topic.name);
      if (!byPayload) byTopic.set(topic.name, (byPayload = new Map()));
      const list = byPayload.get(payload);
      if (list) list.push(client);
      else byPayload.set(payload, [client]);
    }
    for (const [transport, byTopic] of groups) {
      for (const [topicName, byPayload] of byTopic) {
        for (const [payload, clients] of byPayload) {
          try {
            transport.deliver(topicName, payload, clients);
          } catch (err) {
            this.logger.error({ err, topic: topicName }, 'delivery failed');
          }
        }
      }
    }
  }

  // A login ended or changed somewhere: its streams here end unless it still stands unchanged.
  private async recheck(message: SessionEndedMessage): Promise<void> {
    const sessionIds = new Set(message.sessionIds ?? []);
    const userIds = new Set(message.userIds ?? []);
    await this.revalidate([...this.clients].filter((c) => c.subscriber.session && (sessionIds.has(c.subscriber.session.sessionId) || userIds.has(c.subscriber.session.userId))));
  }

  // The streams of a store that is no longer active end (its anonymous ones too); any other
  // change of the row leaves them be.
  private async storeChanged(storeId: string): Promise<void> {
    const affected = [...this.clients].filter((c) => c.subscriber.storeId === storeId || c.subscriber.session?.storeId === storeId);
    if (!affected.length) return;
    try {
      const store = await this.stores.findById(storeId);
      if (store?.isActive) return;
    } catch (err) {
      this.logger.error({ err, storeId }, 'store change not checked');
      return;
    }
    await this.revalidate(affected);
  }

  // Each client's credentials are checked again as at connect: a stream goes on only as the
  // same login (or the same anonymous subscriber) with the same roles.
  private async revalidate(clients: EventClient[]): Promise<void> {
    await Promise.all(
      clients.map(async (client) => {
        const before = client.subscriber.session;
        try {
          const { subscriber } = await this.principals.authenticate(client.credentials);
          const now = subscriber.session;
          if (now?.sessionId !== before?.sessionId || now?.roles.join() !== before?.roles.join()) client.close(new AppError('SessionChanged', 'your session changed: connect again'));
          else client.subscriber = subscriber;
        } catch (error) {
          // The refusal's own code (Unauthorized, StoreInactive, TenantMismatch...), as HTTP would answer.
          const refused = asChannelFailure(error, this.logger, 'event stream not checked again', 'your session could not be checked');
          const detail = refused.errCode === 'StoreInactive' ? 'the store is deactivated' : refused.status >= 500 ? refused.detail : 'your session has ended';
          client.close(new AppError(refused.errCode, detail, {}, refused.messageCode));
        }
      }),
    );
  }

  // A login's session ends at its expiry. An API key's session is only its day-long validation:
  // the key is checked again and the stream goes on while the key stands.
  private sweepExpired(): void {
    const now = this.clock.now().getTime();
    const keys: EventClient[] = [];
    for (const client of this.clients) {
      const session = client.subscriber.session;
      if (!session || Date.parse(session.expiresAt) > now || this.checking.has(client)) continue;
      if (session.principal === 'apiKey') keys.push(client);
      else client.close(new AppError('Unauthorized', 'your session has expired'));
    }
    for (const client of keys) this.checking.add(client);
    void this.revalidate(keys).finally(() => keys.forEach((c) => this.checking.delete(c)));
  }
}
