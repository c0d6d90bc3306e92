import { Injectable } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Broker } from './broker.js';
import { apiEventTopic, dbEventTopic } from './topics.js';

const TOPIC_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
// Names that never travel in an event, at any depth, whoever publishes.
const SECRET_FIELDS = new Set(['password', 'passwordhash', 'keyhash', 'secret', 'secretvars', 'secretcode', 'accesstoken', 'refreshtoken', 'privatekey', 'clientsecret']);

// The documented way to put events on the broker, for the service's own features and for
// backend teams extending it:
//   publisher.publishApiEvent('order', 'shipped', { id, storeId, _owner, ... })  → <svc>-order-shipped
//   publisher.publishDbEvent('order', 'updated', row)                          → <svc>-dbevent-order-updated
//   publisher.publish('billing-invoice-paid', data)                            → that topic, literally
// `storeId` and `_owner` in the payload drive the tenant and owner filters of subscribers: an
// event without `storeId` reaches only public and absolute-role subscribers.
@Injectable()
export class EventPublisher {
  readonly service: string;
  private readonly published = new Set<(topic: string, data: Record<string, unknown>) => void>();

  constructor(
    private readonly broker: Broker,
    config: AppConfig,
  ) {
    this.service = config.env.SERVICE_CODENAME;
  }

  // `id`: the message's id beside its data (a domain event's own, so that each delivery of the
  // event carries the same); without it the broker makes one.
  async publish(topic: string, data: Record<string, unknown>, id?: string): Promise<void> {
    if (typeof topic !== 'string' || !TOPIC_SHAPE.test(topic)) throw new AppError('ValidationFailed', 'a topic is 1-200 letters, digits and . _ : -');
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new AppError('ValidationFailed', 'an event payload is an object');
    const clean = withoutSecrets(data) as Record<string, unknown>;
    await this.broker.publish(topic, clean, id);
    for (const listener of this.published) listener(topic, clean);
  }

  // Told of each event this process published, once: acting here happens once per event, where
  // a broker subscription would act once per replica. Listeners must not throw.
  onPublished(listener: (topic: string, data: Record<string, unknown>) => void): () => void {
    this.published.add(listener);
    return () => void this.published.delete(listener);
  }

  publishApiEvent(object: string, verb: string, data: Record<string, unknown>, id?: string): Promise<void> {
    return this.publish(apiEventTopic(this.service, object, verb), data, id);
  }

  publishDbEvent(object: string, verb: string, data: Record<string, unknown>, id?: string): Promise<void> {
    return this.publish(dbEventTopic(this.service, object, verb), data, id);
  }
}

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (!value || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([k]) => !SECRET_FIELDS.has(k.toLowerCase()))
      .map(([k, v]) => [k, withoutSecrets(v)]),
  );
}
