import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';

// Internal domain events: ids only, never whole entities or secrets. Listeners use
// `@OnEvent(name)` from @nestjs/event-emitter; emitters go through this typed service.
export interface DomainEventMap {
  'store.created': { storeId: string; ownerId: string };
  'user.created': { userId: string; storeId: string };
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
