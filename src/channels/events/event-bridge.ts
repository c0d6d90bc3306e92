import { Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { ApiKeyService } from '../../identity/apikey/api-key.service.js';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { sessionEndedTopic } from '../../delivery/broker/topics.js';
import { StoreService } from '../../identity/store/store.service.js';
import { UserService } from '../../identity/user/user.service.js';
import type { DomainEventMap } from '../../kernel/domain-events.js';
import type { SessionEndedMessage } from './event-hub.js';

// The service's own events on the broker: each domain event becomes the API event
// `<svc>-<object>-<verb>` and the database event `<svc>-dbevent-<object>-<verb>`, carrying the
// object as its API shows it (never a password hash, key hash or secret) with `storeId` and
// `_owner`. Session changes go to every replica's event channel; ended sessions also as the API
// event `<svc>-session-ended`, for the user's other devices.
@Injectable()
export class EventBridge {
  private readonly logger = new Logger('EventBridge');

  constructor(
    private readonly publisher: EventPublisher,
    private readonly users: UserService,
    private readonly stores: StoreService,
    private readonly apiKeys: ApiKeyService,
  ) {}

  @OnEvent('store.created')
  async storeCreated(e: DomainEventMap['store.created']): Promise<void> {
    const store = await this.stores.findById(e.storeId);
    if (store) await this.both('store', 'created', { ...this.stores.toResponse(store), storeId: store.id, _owner: store.ownerId });
  }

  @OnEvent('user.created')
  async userCreated(e: DomainEventMap['user.created']): Promise<void> {
    await this.user('created', e.storeId, e.userId);
  }

  @OnEvent('user.updated')
  async userUpdated(e: DomainEventMap['user.updated']): Promise<void> {
    await this.user('updated', e.storeId, e.userId);
    // Roles or the active flag may have changed: open streams are checked again.
    await this.sessionsChanged({ userIds: [e.userId] });
  }

  @OnEvent('user.deleted')
  async userDeleted(e: DomainEventMap['user.deleted']): Promise<void> {
    await this.both('user', 'deleted', { id: e.userId, storeId: e.storeId, _owner: e.ownerId });
    await this.sessionsChanged({ userIds: [e.userId] });
  }

  @OnEvent('apikey.created')
  async apiKeyCreated(e: DomainEventMap['apikey.created']): Promise<void> {
    const view = await this.apiKeys.findView(e.storeId, e.apiKeyId);
    if (view) await this.both('apikey', 'created', { ...view, _owner: view.userId });
  }

  @OnEvent('apikey.deleted')
  async apiKeyDeleted(e: DomainEventMap['apikey.deleted']): Promise<void> {
    await this.both('apikey', 'deleted', { id: e.apiKeyId, userId: e.userId, storeId: e.storeId, _owner: e.userId });
    // A key's session id is the key's id.
    await this.sessionsChanged({ sessionIds: [e.apiKeyId] });
  }

  @OnEvent('notification.created')
  async notificationCreated(e: DomainEventMap['notification.created']): Promise<void> {
    await this.both('notification', 'created', { id: e.notificationId, storeId: e.storeId, userId: e.userId, channel: e.channel, template: e.template, _owner: e.userId });
  }

  @OnEvent('session.ended')
  async sessionEnded(e: DomainEventMap['session.ended']): Promise<void> {
    await this.sessionsChanged({ sessionIds: e.sessionIds });
    // Ids only: a session's token is never published. No database event: the rows are gone,
    // and what clients act on is the session's end.
    const data = { storeId: e.storeId, userId: e.userId, sessionIds: e.sessionIds, _owner: e.userId };
    await this.guard('session.ended', () => this.publisher.publishApiEvent('session', 'ended', data));
  }

  private async user(verb: string, storeId: string, userId: string): Promise<void> {
    const user = await this.users.findById(storeId, userId);
    if (user) await this.both('user', verb, this.users.toResponse(user));
  }

  // Publishing never fails the change that caused it: it is logged and the request goes on.
  private async both(object: string, verb: string, data: Record<string, unknown>): Promise<void> {
    await this.guard(`${object}.${verb}`, () => Promise.all([this.publisher.publishApiEvent(object, verb, data), this.publisher.publishDbEvent(object, verb, data)]));
  }

  private async sessionsChanged(message: SessionEndedMessage): Promise<void> {
    await this.guard('session change', () => this.publisher.publish(sessionEndedTopic(this.publisher.service), message as Record<string, unknown>));
  }

  private async guard(what: string, publish: () => Promise<unknown>): Promise<void> {
    try {
      await publish();
    } catch (err) {
      this.logger.error({ err, event: what }, 'could not publish an event');
    }
  }
}
