import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Outbox, type OutboxRow } from '../platform/database/outbox.js';
import { afterCommit, type Tx } from '../platform/database/transactions.js';
import { DomainEventDispatcher, LISTENS_TO } from './domain-event-dispatcher.js';

// The catalogue of domain events: what a change means for others. Payloads carry ids (and the
// store), never whole entities or secrets: a listener reads what it needs when it gets the event.
// Open by declaration merging, as the error catalogue is: an extension adds its own with
//   declare module '<service>/kernel/domain-events.js' {
//     interface DomainEventMap { 'order.shipped': { storeId: string; orderId: string } }
//   }
// Every event names its store (`storeId`): the outbox row carries it.
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

// An event as a listener gets it: `id` is the event's own, stable (the outbox row's: the same on
// every delivery, so a listener that gets it twice can tell), `name` and `payload` as emitted.
export interface DomainEvent<K extends DomainEventName = DomainEventName> {
  id: string;
  name: K;
  storeId: string;
  payload: DomainEventMap[K];
}

// Marks a provider's method as a listener of these events (any module's, an extension's too):
//   @OnDomainEvent('user.created')
//   async welcome(event: DomainEvent<'user.created'>): Promise<void> { ... }
// Delivered at least once, after the commit of the change that emitted it: a listener must be
// idempotent (the event's `id` tells a repeat). A listener that throws has the event delivered
// again later, to every listener of it.
export function OnDomainEvent<K extends DomainEventName>(...names: [K, ...K[]]) {
  return <T extends (event: DomainEvent<K>) => unknown>(_target: object, _key: string | symbol, descriptor: TypedPropertyDescriptor<T>): void => {
    const method = descriptor.value as object;
    const already = (Reflect.getMetadata(LISTENS_TO, method) as string[] | undefined) ?? [];
    Reflect.defineMetadata(LISTENS_TO, [...already, ...names], method);
  };
}

// An event written by a repository in the statement of its change (insertOutboxRows), to be
// handed to `written`.
export type StoredDomainEvent = OutboxRow;

// The one way a change tells others about itself: `emit` writes the event to the outbox in the
// change's transaction (the change and its events commit or roll back together), and the events
// are delivered once it has committed (see DomainEventDispatcher). Whatever the emitting code
// must do before anyone hears of the change (dropping cached copies) goes in an `afterCommit`
// hook registered before the emit: the hooks run in order, the delivery being the emit's.
@Injectable()
export class DomainEvents {
  constructor(
    private readonly outbox: Outbox,
    private readonly dispatcher: DomainEventDispatcher,
  ) {}

  async emit<K extends DomainEventName>(name: K, payload: DomainEventMap[K] & { storeId: string }, tx: Tx): Promise<void> {
    const event: StoredDomainEvent = { id: randomUUID(), storeId: payload.storeId, name, payload };
    await this.outbox.insert([event], tx);
    this.written([event], tx);
  }

  // A listener added while the service runs (one that listens only for a while); the function
  // returned removes it. Delivered as `@OnDomainEvent` listeners are.
  listen<K extends DomainEventName>(name: K, handle: (event: DomainEvent<K>) => unknown): () => void {
    return this.dispatcher.listen(name, { name: `listener of ${name}`, handle: handle as (event: StoredDomainEvent) => unknown });
  }

  // Events a repository wrote in the statement of its change: delivered once `tx` commits, or at
  // once when the statement ran alone (it has committed).
  written(events: readonly StoredDomainEvent[], tx?: Tx): void {
    if (events.length) afterCommit(tx, () => this.dispatcher.deliverCommitted(events));
  }
}
