import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../platform/config/env.js';
import type { EventSubscriptionSetting } from '../../kernel/data-objects.settings.js';
import { compileSubscriptions } from './event-subscriptions.js';

function sub(overrides: Partial<EventSubscriptionSetting> = {}, topic: Record<string, unknown> = {}): EventSubscriptionSetting {
  return {
    name: 'orders',
    description: '',
    transport: 'websocket',
    topics: [{ name: 'orderCreated', dataObjectName: 'user', topic: 'user.created', description: '', ...topic }],
    auth: { absoluteRoles: [] },
    ...overrides,
  } as EventSubscriptionSetting;
}

function problems(subs: EventSubscriptionSetting[], dataObjectAccess = [] as { name: string; accessLevel: 'accessPublic'; hasOwnerField: boolean }[]): string {
  try {
    compileSubscriptions({ eventSubscriptions: subs, dataObjectAccess }, 'auth');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the boot to stop');
}

describe('event subscription settings', () => {
  it('resolve aliases, with object names in any case, and take access levels from dataObjectAccess', () => {
    const compiled = compileSubscriptions(
      {
        eventSubscriptions: [
          sub({ topics: [
            { name: 'k', dataObjectName: 'apiKey', topic: 'apikey.created', description: '' },
            { name: 'o', dataObjectName: 'Order', topic: 'dbEvent:order:shipped', description: '' },
            { name: 'f', dataObjectName: 'user', topic: 'user_updated', description: '', forceAccessLevel: 'accessPublic' },
          ] } as Partial<EventSubscriptionSetting>),
        ],
        dataObjectAccess: [{ name: 'order', accessLevel: 'accessProtected', hasOwnerField: false }],
      },
      'auth',
    );
    const topics = compiled.get('orders')!.topics;
    expect(topics.get('k')).toMatchObject({ brokerTopic: 'auth-apikey-created', accessLevel: 'accessPrivate', hasOwnerField: true });
    expect(topics.get('o')).toMatchObject({ brokerTopic: 'auth-dbevent-order-shipped', accessLevel: 'accessProtected', hasOwnerField: false });
    expect(topics.get('f')).toMatchObject({ brokerTopic: 'auth-user-updated', accessLevel: 'accessPublic' });
  });

  it('treat an empty checkRoles as no restriction', () => {
    expect(compileSubscriptions({ eventSubscriptions: [sub({ auth: { absoluteRoles: [], checkRoles: [] } })], dataObjectAccess: [] }, 'auth').get('orders')!.checkRoles).toBeUndefined();
  });

  it('stop the boot on an alias naming no known object, with subscription and topic named', () => {
    expect(problems([sub({}, { topic: 'order.created' })])).toContain('settings.eventSubscriptions "orders" topic "orderCreated": alias "order.created" names no known data object "order"');
  });

  it('stop the boot on an unknown dataObjectName', () => {
    expect(problems([sub({}, { dataObjectName: 'invoice' })])).toContain('topic "orderCreated": dataObjectName "invoice" is not a known data object');
  });

  it.each([
    ['authScript', { auth: { absoluteRoles: [], authScript: 'session.roleId ==' } }, 'settings.eventSubscriptions "orders": authScript does not compile'],
    ['authScript using data', { auth: { absoluteRoles: [], authScript: 'data.x == 1' } }, 'authScript does not compile: Unknown variable: data'],
    ['filterScript not a bool', { auth: { absoluteRoles: [], filterScript: '"yes"' } }, 'filterScript does not compile: must produce a bool, not string'],
  ])('stop the boot on a %s that does not compile', (_kind, overrides, message) => {
    expect(problems([sub(overrides as Partial<EventSubscriptionSetting>)])).toContain(message);
  });

  it('stop the boot on a payloadMapping that does not compile, naming the topic', () => {
    expect(problems([sub({}, { payloadMapping: '{"a": data.x' })])).toContain('settings.eventSubscriptions "orders" topic "orderCreated": payloadMapping does not compile');
    expect(problems([sub({}, { payloadMapping: 'data.x > 1' })])).toContain('payloadMapping does not compile: must produce a map, not bool');
  });
});
