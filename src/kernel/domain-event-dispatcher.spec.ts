import { describe, expect, it } from '@jest/globals';
import { MetadataScanner, type DiscoveryService } from '@nestjs/core';
import type { AppConfig } from '../platform/config/app-config.js';
import type { Outbox, OutboxRow } from '../platform/database/outbox.js';
import { DispatchHold, DomainEventDispatcher } from './domain-event-dispatcher.js';
import { OnDomainEvent, type DomainEvent } from './domain-events.js';

const STORE = '00000000-0000-4000-8000-000000000001';

class Listener {
  readonly got: string[] = [];
  failing = false;

  @OnDomainEvent('user.created', 'user.updated')
  user(event: DomainEvent<'user.created' | 'user.updated'>): void {
    this.got.push(`${event.name} ${event.id}`);
    if (this.failing) throw new Error('unavailable');
  }
}

// An outbox in memory: what was claimed and marked.
class MemoryOutbox {
  pending: OutboxRow[] = [];
  marked: string[][] = [];

  async claim(_lease: number, limit: number): Promise<OutboxRow[]> {
    return this.pending.splice(0, limit);
  }

  async markDispatched(ids: readonly string[]): Promise<void> {
    if (ids.length) this.marked.push([...ids]);
  }
}

const event = (id: string, name = 'user.created'): OutboxRow => ({ id, storeId: STORE, name, payload: { storeId: STORE, userId: 'u' } });

function dispatcher(providers: object[], hold?: DispatchHold) {
  const outbox = new MemoryOutbox();
  const config = { section: () => ({ domainEvents: { sweepSeconds: 5, leaseSeconds: 30, retentionHours: 24 } }) };
  const discovery = { getProviders: () => providers.map((instance) => ({ instance, isDependencyTreeStatic: () => true })) };
  const d = new DomainEventDispatcher(outbox as unknown as Outbox, config as unknown as AppConfig, discovery as unknown as DiscoveryService, new MetadataScanner(), hold);
  d.onModuleInit();
  return { d, outbox };
}

const settled = () => new Promise((r) => setTimeout(r, 50));

describe('DomainEventDispatcher', () => {
  it('delivers a committed event to each @OnDomainEvent listener once (an alias of a provider is the same listener), then marks it', async () => {
    const listener = new Listener();
    const { d, outbox } = dispatcher([listener, listener, { unrelated: true }]);
    d.deliverCommitted([event('e1'), event('e2', 'user.updated'), event('e3', 'store.created')]);
    await settled();
    expect(listener.got).toEqual(['user.created e1', 'user.updated e2']);
    // One statement for the marks of a moment; an event no one listens to is delivered too.
    expect(outbox.marked.map((ids) => [...ids].sort())).toEqual([['e1', 'e2', 'e3']]);
  });

  it('leaves an event a listener refused undelivered, for a sweep to deliver again with the same id', async () => {
    const listener = new Listener();
    const { d, outbox } = dispatcher([listener]);
    listener.failing = true;
    d.deliverCommitted([event('e1')]);
    await settled();
    expect(outbox.marked).toEqual([]);
    listener.failing = false;
    outbox.pending = [event('e1')];
    expect(await d.sweep()).toBe(1);
    expect(listener.got).toEqual(['user.created e1', 'user.created e1']);
    expect(outbox.marked).toEqual([['e1']]);
  });

  it('sweeps batch after batch until the outbox has none left', async () => {
    const listener = new Listener();
    const { d, outbox } = dispatcher([listener]);
    outbox.pending = Array.from({ length: 250 }, (_, i) => event(`e${i}`));
    expect(await d.sweep()).toBe(250);
    expect(outbox.marked.map((ids) => ids.length)).toEqual([100, 100, 50]);
  });

  it('delivers nothing while a hold says so', async () => {
    const listener = new Listener();
    let held = true;
    const { d, outbox } = dispatcher([listener], { held: () => held });
    outbox.pending = [event('e1')];
    d.deliverCommitted([event('e2')]);
    expect(await d.sweep()).toBe(0);
    await settled();
    expect(listener.got).toEqual([]);
    held = false;
    expect(await d.sweep()).toBe(1);
    expect(listener.got).toEqual(['user.created e1']);
  });
});
