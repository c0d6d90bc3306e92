import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';

// Internal domain events: ids only, never whole entities or secrets. Listeners use
// `@OnEvent(name)` from @nestjs/event-emitter; emitters go through this typed service.
// EventBridge puts them on the broker under the spec's topic names.
export interface DomainEventMap {
  'store.created': { storeId: string; ownerId: string };
  'user.created': { userId: string; storeId: string };
  'user.updated': { userId: string; storeId: string };
  'user.deleted': { userId: string; storeId: string; ownerId: string | null };
  'apikey.created': { apiKeyId: string; storeId: string; userId: string };
  'apikey.deleted': { apiKeyId: string; storeId: string; userId: string };
  'notification.created': { notificationId: string; storeId: string; userId: string | null; channel: string; template: string };
  // Logout, revocation, a new password or a deactivation ended these sessions of one user.
  'session.ended': { storeId: string; userId: string; sessionIds: string[] };
}

export type DomainEventName = keyof DomainEventMap;

@Injectable()
export class DomainEvents {
  constructor(private readonly emitter: EventEmitter2) {}

  // Call after the transaction that made the change has committed.
  emit<K extends DomainEventName>(name: K, payload: DomainEventMap[K]): void {
    this.emitter.emit(name, payload);
  }
}
