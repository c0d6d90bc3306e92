import { Injectable } from '@nestjs/common';
import { ApiKeyService } from '../../identity/apikey/api-key.service.js';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { sessionEndedTopic } from '../../delivery/broker/topics.js';
import { StoreService } from '../../identity/store/store.service.js';
import { UserService } from '../../identity/user/user.service.js';
import { OnDomainEvent, type DomainEvent, type DomainEventName } from '../../kernel/domain-events.js';
import type { SessionEndedMessage } from './event-hub.js';

// One API event: `<object>-<verb>` with the object as its API shows it, `storeId` and `_owner`.
// `database`: also published as the database event (not for a session's end: its rows are gone,
// and what clients act on is the end itself).
export interface ApiEvent {
  object: string;
  verb: string;
  data: Record<string, unknown>;
  database: boolean;
}

// The domain events that become API events, and the API events they become (as `<object>-<verb>`).
export const BRIDGED_EVENTS = ['store.created', 'user.created', 'user.updated', 'user.deleted', 'apikey.created', 'apikey.deleted', 'notification.created', 'session.ended'] as const satisfies readonly DomainEventName[];
export const API_EVENT_NAMES = ['store-created', 'user-created', 'user-updated', 'user-deleted', 'apikey-created', 'apikey-deleted', 'notification-created', 'session-ended'] as const;

// The service's own events on the broker: each domain event becomes the API event
// `<svc>-<object>-<verb>` and the database event `<svc>-dbevent-<object>-<verb>`, carrying the
// object as its API shows it (never a password hash, key hash or secret) with `storeId` and
// `_owner`; each message's id (beside its data) is the event's, the same on every delivery. Session
// changes go to every replica's event channel; ended sessions also as the API event
// `<svc>-session-ended`, for the user's other devices. A publish that fails fails the delivery:
// the outbox delivers the event again later (docs/events.md). Webhooks send the same API events
// (apiEventsOf).
@Injectable()
export class EventBridge {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly users: UserService,
    private readonly stores: StoreService,
    private readonly apiKeys: ApiKeyService,
  ) {}

  @OnDomainEvent(...BRIDGED_EVENTS)
  async bridge(event: DomainEvent<(typeof BRIDGED_EVENTS)[number]>): Promise<void> {
    const published = (await this.apiEventsOf(event)).flatMap(({ object, verb, data, database }) => [
      this.publisher.publishApiEvent(object, verb, data, event.id),
      ...(database ? [this.publisher.publishDbEvent(object, verb, data, event.id)] : []),
    ]);
    await Promise.all([...published, this.sessionsChanged(event)]);
  }

  // The API events a domain event becomes, read now (an object gone since has none).
  async apiEventsOf(event: DomainEvent): Promise<ApiEvent[]> {
    const one = (object: string, verb: string, data: Record<string, unknown>, database = true): ApiEvent[] => [{ object, verb, data, database }];
    switch (event.name) {
      case 'store.created': {
        const e = event.payload as DomainEvent<'store.created'>['payload'];
        const store = await this.stores.findById(e.storeId);
        return store ? one('store', 'created', { ...this.stores.toResponse(store), storeId: store.id, _owner: store.ownerId }) : [];
      }
      case 'user.created':
      case 'user.updated': {
        const e = event.payload as DomainEvent<'user.created'>['payload'];
        const user = await this.users.findById(e.storeId, e.userId);
        return user ? one('user', event.name === 'user.created' ? 'created' : 'updated', this.users.toResponse(user)) : [];
      }
      case 'user.deleted': {
        const e = event.payload as DomainEvent<'user.deleted'>['payload'];
        return one('user', 'deleted', { id: e.userId, storeId: e.storeId, _owner: e.ownerId });
      }
      case 'apikey.created': {
        const e = event.payload as DomainEvent<'apikey.created'>['payload'];
        const view = await this.apiKeys.findView(e.storeId, e.apiKeyId);
        return view ? one('apikey', 'created', { ...view, _owner: view.userId }) : [];
      }
      case 'apikey.deleted': {
        const e = event.payload as DomainEvent<'apikey.deleted'>['payload'];
        return one('apikey', 'deleted', { id: e.apiKeyId, userId: e.userId, storeId: e.storeId, _owner: e.userId });
      }
      case 'notification.created': {
        const e = event.payload as DomainEvent<'notification.created'>['payload'];
        return one('notification', 'created', { id: e.notificationId, storeId: e.storeId, userId: e.userId, channel: e.channel, template: e.template, _owner: e.userId });
      }
      case 'session.ended': {
        // Ids only: a session's token is never published.
        const e = event.payload as DomainEvent<'session.ended'>['payload'];
        return one('session', 'ended', { storeId: e.storeId, userId: e.userId, sessionIds: e.sessionIds, _owner: e.userId }, false);
      }
      default:
        return [];
    }
  }

  // Roles or the active flag of a user may have changed, a key or sessions ended: every
  // replica's open streams are checked again.
  private async sessionsChanged(event: DomainEvent): Promise<void> {
    let message: SessionEndedMessage | undefined;
    if (event.name === 'user.updated' || event.name === 'user.deleted') message = { userIds: [(event.payload as { userId: string }).userId] };
    // A key's session id is the key's id.
    else if (event.name === 'apikey.deleted') message = { sessionIds: [(event.payload as { apiKeyId: string }).apiKeyId] };
    else if (event.name === 'session.ended') message = { sessionIds: (event.payload as { sessionIds: string[] }).sessionIds };
    if (message) await this.publisher.publish(sessionEndedTopic(this.publisher.service), message as Record<string, unknown>, event.id);
  }
}
