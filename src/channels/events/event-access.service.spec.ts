import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { captureNestLog } from '../../../test/nest-log.js';
import type { EventSubscriptionSetting } from '../../kernel/data-objects.settings.js';
import type { SessionData } from '../../kernel/principal.js';
import { EventAccessService, MessageContext, type Subscriber } from './event-access.service.js';
import { compileSubscriptions, type CompiledSubscription } from './event-subscriptions.js';

const STORE_A = 'store-a';
const STORE_B = 'store-b';

function session(userId: string, storeId: string, role: string): SessionData {
  return { sessionId: `s-${userId}`, userId, storeId, roles: [role], email: `${userId}@example.com`, mobile: null, fullname: userId, expiresAt: '2999-01-01T00:00:00Z' };
}

const anonymous: Subscriber = { storeId: STORE_A };
const userA: Subscriber = { storeId: STORE_A, session: session('user-a', STORE_A, 'tenantUser') };
const ownerA: Subscriber = { storeId: STORE_A, session: session('owner-a', STORE_A, 'tenantUser') };
const adminA: Subscriber = { storeId: STORE_A, session: session('admin-a', STORE_A, 'tenantAdmin') };
const userB: Subscriber = { storeId: STORE_B, session: session('user-b', STORE_B, 'tenantUser') };
const superAdmin: Subscriber = { storeId: STORE_A, session: session('root', 'root-store', 'superAdmin') };

const TOPICS = [
  { name: 'pub', dataObjectName: 'store', topic: 'store.created', description: '' },
  { name: 'prot', dataObjectName: 'user', topic: 'user.created', description: '' },
  { name: 'priv', dataObjectName: 'apiKey', topic: 'apikey.created', description: '' },
  { name: 'privNoOwner', dataObjectName: 'audit', topic: 'audit.created', description: '' },
];

function compile(auth: Partial<EventSubscriptionSetting['auth']> = {}, topics: Record<string, unknown>[] = TOPICS): CompiledSubscription {
  return compileSubscriptions(
    {
      eventSubscriptions: [{ name: 's', description: '', transport: 'websocket', topics, auth: { absoluteRoles: ['superAdmin'], ...auth } } as unknown as EventSubscriptionSetting],
      dataObjectAccess: [{ name: 'audit', accessLevel: 'accessPrivate', hasOwnerField: false }],
    },
    'auth',
  ).get('s')!;
}

const access = new EventAccessService();

// A script that throws is logged as a warning naming where: kept here for the tests to read, and
// a warning no test took fails the test it came from.
let log: ReturnType<typeof captureNestLog>;
beforeEach(() => {
  log = captureNestLog();
});
afterEach(() => {
  const untaken = log.take();
  log.restore();
  expect(untaken).toEqual([]);
});

function scriptFailure(where: string, error: string, message: string) {
  return { level: 'warn', message: { err: expect.objectContaining({ message: expect.stringContaining(error) }), where }, params: [message, 'EventAccess'] };
}
const ALL = ['pub', 'prot', 'priv', 'privNoOwner'];

function event(topic: string, data: Record<string, unknown>) {
  return new MessageContext({ topic, data, publishedAt: Date.now() });
}

function receives(who: Subscriber, sub: CompiledSubscription, topicName: string, data: Record<string, unknown>) {
  const topic = sub.topics.get(topicName)!;
  return access.shape(who, sub, topic, event(topic.brokerTopic, data));
}

describe('event access: subscribe time', () => {
  const sub = compile();

  it('public topics for anyone, even anonymous; the rest need a login', () => {
    expect(access.authorize(anonymous, sub, ALL)).toEqual({
      topics: ['pub'],
      rejected: [
        { topic: 'prot', reason: 'LoginRequired' },
        { topic: 'priv', reason: 'LoginRequired' },
        { topic: 'privNoOwner', reason: 'LoginRequired' },
      ],
    });
  });

  it('a user gets public, protected and private-with-owner topics; private without _owner is for admins', () => {
    expect(access.authorize(userA, sub, ALL)).toEqual({ topics: ['pub', 'prot', 'priv'], rejected: [{ topic: 'privNoOwner', reason: 'AdminOnly' }] });
    expect(access.authorize(adminA, sub, ALL)).toEqual({ topics: ALL, rejected: [] });
  });

  it('an invalid session is refused every topic', () => {
    expect(access.authorize('invalidSession', sub, ['pub', 'prot'])).toEqual({ topics: [], rejected: [{ topic: 'pub', reason: 'InvalidSession' }, { topic: 'prot', reason: 'InvalidSession' }] });
  });

  it('reports each requested topic exactly once, unknown ones as UnknownTopic', () => {
    const result = access.authorize(userA, sub, ['pub', 'pub', 'ghost', 'prot']);
    expect(result).toEqual({ topics: ['pub', 'prot'], rejected: [{ topic: 'ghost', reason: 'UnknownTopic' }] });
  });

  it('an absolute role gets every topic before checkRoles and authScript are looked at', () => {
    const strict = compile({ checkRoles: ['tenantAdmin'], authScript: 'false' });
    expect(access.authorize(superAdmin, strict, ALL)).toEqual({ topics: ALL, rejected: [] });
  });

  it('checkRoles turns away every topic of a role not in it; an empty list turns away nobody', () => {
    const strict = compile({ checkRoles: ['tenantAdmin'] });
    expect(access.authorize(userA, strict, ['pub', 'prot'])).toEqual({ topics: [], rejected: [{ topic: 'pub', reason: 'RoleNotAllowed' }, { topic: 'prot', reason: 'RoleNotAllowed' }] });
    expect(access.authorize(adminA, strict, ['pub']).topics).toEqual(['pub']);
    expect(access.authorize(anonymous, compile({ checkRoles: [] }), ['pub']).topics).toEqual(['pub']);
  });

  it('authScript runs per allowed topic with session, topicName and dataObjectName', () => {
    const scripted = compile({ authScript: 'topicName != "prot" && dataObjectName != "apiKey" && session.roleId == "tenantUser"' });
    expect(access.authorize(userA, scripted, ['pub', 'prot', 'priv'])).toEqual({
      topics: ['pub'],
      rejected: [
        { topic: 'prot', reason: 'AuthScriptRejected' },
        { topic: 'priv', reason: 'AuthScriptRejected' },
      ],
    });
    // after the default authorization: an anonymous client is refused by the level, not the script
    expect(access.authorize(anonymous, scripted, ['prot']).rejected).toEqual([{ topic: 'prot', reason: 'LoginRequired' }]);
  });

  it('an authScript that throws rejects the topic with its own reason', () => {
    const broken = compile({ authScript: 'session.nothing == "x"' });
    expect(access.authorize(userA, broken, ['pub']).rejected).toEqual([{ topic: 'pub', reason: 'AuthScriptFailed' }]);
    expect(log.take()).toEqual([scriptFailure('s/pub/auth', 'No such key: nothing', 'authScript failed; topic rejected')]);
  });
});

describe('event access: per event', () => {
  const sub = compile();
  const inA = { id: 'x', storeId: STORE_A, _owner: 'owner-a' };

  it('public events reach everyone, whatever store they name', () => {
    for (const who of [anonymous, userA, userB]) expect(receives(who, sub, 'pub', { id: 's', storeId: STORE_B })).toBeDefined();
  });

  it('protected events reach only subscribers of the same store', () => {
    expect(receives(userA, sub, 'prot', inA)).toEqual(inA);
    expect(receives(userB, sub, 'prot', inA)).toBeUndefined();
    expect(receives(userA, sub, 'prot', { id: 'x' })).toBeUndefined(); // names no store
  });

  it('private events reach their owner and the store admins only', () => {
    expect(receives(ownerA, sub, 'priv', inA)).toEqual(inA);
    expect(receives(adminA, sub, 'priv', inA)).toEqual(inA);
    expect(receives(userA, sub, 'priv', inA)).toBeUndefined();
    expect(receives(userB, sub, 'priv', { ...inA, storeId: STORE_B, _owner: 'user-b' })).toBeDefined();
    expect(receives({ storeId: STORE_B, session: session('admin-b', STORE_B, 'tenantAdmin') }, sub, 'priv', inA)).toBeUndefined();
  });

  it('an absolute role sees every store, unfiltered', () => {
    expect(receives(superAdmin, sub, 'priv', { ...inA, storeId: STORE_B })).toBeDefined();
    expect(receives(superAdmin, compile({ filterScript: 'false' }), 'prot', inA)).toBeDefined();
  });

  it('filterScript sees data and the session; false skips the event', () => {
    const filtered = compile({ filterScript: 'data.amount > 10 && session.userId == "owner-a" && topicName == "prot"' });
    expect(receives(ownerA, filtered, 'prot', { ...inA, amount: 11 })).toBeDefined();
    expect(receives(ownerA, filtered, 'prot', { ...inA, amount: 10 })).toBeUndefined();
    expect(receives(userA, filtered, 'prot', { ...inA, amount: 11 })).toBeUndefined();
  });

  it('a filterScript that throws skips the event for that subscriber only, and the next event goes on', () => {
    const filtered = compile({ filterScript: 'data.amount > 10' });
    expect(receives(userA, filtered, 'prot', inA)).toBeUndefined(); // no amount: the script throws
    expect(receives(userA, filtered, 'prot', { ...inA, amount: 20 })).toBeDefined();
    expect(log.take()).toEqual([scriptFailure('s/prot', 'No such key: amount', 'event script failed; event skipped for this subscriber')]);
  });

  it('payloadMapping builds the payload, then excludeFields strips it', () => {
    const shaped = compile({}, [{ name: 'prot', dataObjectName: 'user', topic: 'user.created', description: '', payloadMapping: '{"who": data.fullname, "n": data.n + 1, "storeId": data.storeId, "email": data.email}', excludeFields: ['email'] }]);
    expect(receives(userA, shaped, 'prot', { ...inA, fullname: 'Ann', n: 1, email: 'a@example.com' })).toEqual({ who: 'Ann', n: 2, storeId: STORE_A });
  });

  it('excludeFields alone strips fields without touching the published object', () => {
    const stripped = compile({}, [{ name: 'prot', dataObjectName: 'user', topic: 'user.created', description: '', excludeFields: ['email', '_owner'] }]);
    const data = { ...inA, email: 'a@example.com' };
    expect(receives(userA, stripped, 'prot', data)).toEqual({ id: 'x', storeId: STORE_A });
    expect(data.email).toBe('a@example.com');
  });
});
