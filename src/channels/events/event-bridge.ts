import { Injectable } from '@nestjs/common';
import { ApiKeyService } from '../../identity/apikey/api-key.service.js';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { sessionEndedTopic } from '../../delivery/broker/topics.js';
import { StoreService } from '../../identity/store/store.service.js';
import { UserService } from '../../identity/user/user.service.js';
import { OnDomainEvent, type DomainEvent } from '../../kernel/domain-events.js';
import type { SessionEndedMessage } from './event-hub.js';

// The service's own events on the broker: each domain event becomes the API event
// `<svc>-<object>-<verb>` and the database event `<svc>-dbevent-<object>-<verb>`, carrying the
// object as its API shows it (never a password hash, key hash or secret) with `storeId` and
// `_owner`; each message's id (beside its data) is the event's, the same on every delivery. Session
// changes go to every replica's event channel; ended sessions also as the API event
// `<svc>-session-ended`, for the user's other devices. A publish that fails fails the delivery:
// the outbox delivers the event again later (docs/events.md).
@Injectable()
export class EventBridge {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly users: UserService,
    private readonly stores: StoreService,
    private readonly apiKeys: ApiKeyService,
  ) {}

  @OnDomainEvent('store.created')
  async storeCreated({ id, payload: e }: DomainEvent<'store.created'>): Promise<void> {
    const store = await this.stores.findById(e.storeId);
    if (store) await this.both(id, 'store', 'created', { ...this.stores.toResponse(store), storeId: store.id, _owner: store.ownerId });
  }

  @OnDomainEvent('user.created')
  async userCreated({ id, payload: e }: DomainEvent<'user.created'>): Promise<void> {
    await this.user(id, 'created', e.storeId, e.userId);
  }

  @OnDomainEvent('user.updated')
  async userUpdated({ id, payload: e }: DomainEvent<'user.updated'>): Promise<void> {
    await this.user(id, 'updated', e.storeId, e.userId);
    // Roles or the active flag may have changed: open streams are checked again.
    await this.sessionsChanged(id, { userIds: [e.userId] });
  }

  @OnDomainEvent('user.deleted')
  async userDeleted({ id, payload: e }: DomainEvent<'user.deleted'>): Promise<void> {
    await this.both(id, 'user', 'deleted', { id: e.userId, storeId: e.storeId, _owner: e.ownerId });
    await this.sessionsChanged(id, { userIds: [e.userId] });
  }

  @OnDomainEvent('apikey.created')
  async apiKeyCreated({ id, payload: e }: DomainEvent<'apikey.created'>): Promise<void> {
    const view = await this.apiKeys.findView(e.storeId, e.apiKeyId);
    if (view) await this.both(id, 'apikey', 'created', { ...view, _owner: view.userId });
  }

  @OnDomainEvent('apikey.deleted')
  async apiKeyDeleted({ id, payload: e }: DomainEvent<'apikey.deleted'>): Promise<void> {
    await this.both(id, 'apikey', 'deleted', { id: e.apiKeyId, userId: e.userId, storeId: e.storeId, _owner: e.userId });
    // A key's session id is the key's id.
    await this.sessionsChanged(id, { sessionIds: [e.apiKeyId] });
  }

  @OnDomainEvent('notification.created')
  async notificationCreated({ id, payload: e }: DomainEvent<'notification.created'>): Promise<void> {
    await this.both(id, 'notification', 'created', { id: e.notificationId, storeId: e.storeId, userId: e.userId, channel: e.channel, template: e.template, _owner: e.userId });
  }

  @OnDomainEvent('session.ended')
  async sessionEnded({ id, payload: e }: DomainEvent<'session.ended'>): Promise<void> {
    await this.sessionsChanged(id, { sessionIds: e.sessionIds });
    // Ids only: a session's token is never published. No database event: the rows are gone,
    // and what clients act on is the session's end.
    const data = { storeId: e.storeId, userId: e.userId, sessionIds: e.sessionIds, _owner: e.userId };
    await this.publisher.publishApiEvent('session', 'ended', data, id);
  }

  private async user(id: string, verb: string, storeId: string, userId: string): Promise<void> {
    const user = await this.users.findById(storeId, userId);
    if (user) await this.both(id, 'user', verb, this.users.toResponse(user));
  }

  private async both(id: string, object: string, verb: string, data: Record<string, unknown>): Promise<void> {
    await Promise.all([this.publisher.publishApiEvent(object, verb, data, id), this.publisher.publishDbEvent(object, verb, data, id)]);
  }

  private async sessionsChanged(id: string, message: SessionEndedMessage): Promise<void> {
    await this.publisher.publish(sessionEndedTopic(this.publisher.service), message as Record<string, unknown>, id);
  }
}
