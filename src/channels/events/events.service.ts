import { Injectable } from '@nestjs/common';
import { ExtensionCatalogue } from '../../kernel/extensions.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { CorsPolicy } from '../../kernel/cors-policy.js';
import { EventAccessService, type SubscribeResult } from './event-access.service.js';
import { EventHub, type EventClient } from './event-hub.js';
import type { CallerCredentials } from '../../identity/auth/caller-resolver.js';
import { EventPrincipals, type ConnectionPrincipal } from './event-principals.js';
import { compileSubscriptions, type CompiledSubscription } from './event-subscriptions.js';
import { BrokerSection } from '../../delivery/broker/broker.settings.js';

const TOPIC_NAME_MAX = 200;

// What both transports ask of the event channel: the subscription by name, who is connecting,
// and subscribe / unsubscribe with the input checked. The transports only carry the answers.
@Injectable()
export class EventsService {
  readonly subscriptions: ReadonlyMap<string, CompiledSubscription>;

  constructor(
    private readonly access: EventAccessService,
    private readonly principals: EventPrincipals,
    readonly hub: EventHub,
    private readonly config: AppConfig,
    private readonly cors: CorsPolicy,
    checks: BootChecks,
    extensions: ExtensionCatalogue,
  ) {
    // Compiled here, at boot: a bad alias or script stops the service with its name, together
    // with every other module's settings problems (BootChecks).
    this.subscriptions = checks.collect(() => compileSubscriptions(withExtensions(config.section(BrokerSection), extensions), config.env.SERVICE_CODENAME)) ?? new Map();
  }

  subscription(name: string, transport: CompiledSubscription['transport']): CompiledSubscription {
    const sub = this.subscriptions.get(name);
    if (!sub) throw new AppError('SubscriptionNotFound', `no event subscription named "${name}"`);
    if (sub.transport !== transport) throw new AppError('SubscriptionNotFound', `event subscription "${name}" is served over ${sub.transport === 'sse' ? 'SSE' : 'Socket.IO'}`);
    return sub;
  }

  // A browser page may open a stream or socket only from an origin the HTTP routes admit too
  // (settings `cors`). Clients that are not browsers send no Origin and are not concerned.
  assertOrigin(origin: string | undefined): void {
    if (origin !== undefined && !this.cors.isAllowed(origin)) {
      throw new AppError('Forbidden', `the origin ${origin} is not allowed (settings cors.allowedOrigins)`);
    }
  }

  // No new stream or socket once a shutdown has begun: the client connects again elsewhere.
  async authenticate(credentials: CallerCredentials): Promise<ConnectionPrincipal> {
    if (this.hub.isStopping) throw new AppError('ServiceUnavailable', 'the service is shutting down');
    return this.principals.authenticate(credentials);
  }

  // Topics the client may have start flowing before this resolves; rejected ones are reported
  // once and never retried. Topics it already holds are reported as allowed again.
  async subscribe(client: EventClient, topics: unknown): Promise<SubscribeResult> {
    const names = this.topicList(topics);
    const result = this.access.authorize(client.subscriber, client.subscription, names);
    await this.hub.add(client, result.topics);
    return result;
  }

  unsubscribe(client: EventClient, topics: unknown): { topics: string[] } {
    return { topics: this.hub.remove(client, this.topicList(topics)) };
  }

  // `topics` as sent: an array of names (Socket.IO), or comma-separated text (the SSE query).
  topicList(topics: unknown, form: 'array' | 'text' = 'array'): string[] {
    const list = form === 'text' && typeof topics === 'string' ? topics.split(',').map((t) => t.trim()).filter(Boolean) : topics;
    if (!Array.isArray(list)) throw new AppError('ValidationFailed', 'topics must be an array of topic names');
    const max = this.config.section(BrokerSection).eventChannel.maxTopicsPerRequest;
    if (list.length > max) throw new AppError('ValidationFailed', `at most ${max} topics per request`);
    if (!list.length) throw new AppError('ValidationFailed', 'name at least one topic');
    if (list.some((t) => typeof t !== 'string' || !t || t.length > TOPIC_NAME_MAX)) throw new AppError('ValidationFailed', `topic names are non-empty strings of at most ${TOPIC_NAME_MAX} characters`);
    return list as string[];
  }
}

// The extensions' data objects and subscriptions beside the settings': the settings' win where
// both name the same data object.
function withExtensions(settings: BrokerSection, extensions: ExtensionCatalogue): Parameters<typeof compileSubscriptions>[0] {
  return {
    eventSubscriptions: [...extensions.eventSubscriptions, ...settings.eventSubscriptions],
    dataObjectAccess: [...extensions.dataObjects, ...settings.dataObjectAccess],
  };
}
