import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { describeIf } from '../../../test/conditions.js';
import { PrivateRedis, privateServersAvailable } from '../../../test/private-servers.js';
import type { Broker, BrokerMessage } from './broker.js';
import { MemoryBroker } from './memory-broker.js';
import { RedisStreamsBroker } from './redis-streams-broker.js';

// One contract, every adapter: what the event channel relies on from a broker.
const REDIS_URL = process.env.REDIS_URL;

interface Adapter {
  name: string;
  // Two brokers as two replicas would hold them: on one bus.
  pair(): [Broker, Broker];
  skip?: string;
}

const opened: Broker[] = [];
const prefixes: string[] = [];
let memoryBus: MemoryBroker | undefined;
const adapters: Adapter[] = [
  {
    name: 'memory',
    // In-process there is one bus: both "replicas" are the same process.
    pair: () => {
      memoryBus = new MemoryBroker();
      return [memoryBus, memoryBus];
    },
  },
  {
    name: 'redis streams',
    skip: REDIS_URL ? undefined : 'needs REDIS_URL',
    pair: () => {
      const prefix = `test:${randomBytes(4).toString('hex')}:`;
      prefixes.push(prefix);
      const make = () => new RedisStreamsBroker({ url: REDIS_URL!, prefix, maxLen: 100, claimIdleMs: 300 });
      const pair: [Broker, Broker] = [make(), make()];
      opened.push(...pair);
      return pair;
    },
  },
];

afterAll(async () => {
  await Promise.all(opened.map((b) => b.close()));
  if (!REDIS_URL || !prefixes.length) return;
  // The streams these tests wrote go with them.
  const redis = new Redis(REDIS_URL);
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  }
  await redis.quit();
});

function collector() {
  const got: BrokerMessage[] = [];
  const handler = (m: BrokerMessage) => void got.push(m);
  const until = async (n: number, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (got.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return got;
  };
  return { got, handler, until };
}

const settle = () => new Promise((r) => setTimeout(r, 150));

for (const adapter of adapters) {
  describeIf(!adapter.skip, adapter.skip ?? '')(`broker contract: ${adapter.name}`, () => {
    it('delivers a published message to every subscriber of its topic, in order, with its payload', async () => {
      const [a, b] = adapter.pair();
      const one = collector();
      const two = collector();
      await a.subscribe('orders', one.handler);
      await b.subscribe('orders', two.handler);
      for (let i = 0; i < 5; i++) await a.publish('orders', { i, storeId: 's1', nested: { ok: true } });
      expect((await one.until(5)).map((m) => m.data.i)).toEqual([0, 1, 2, 3, 4]);
      expect((await two.until(5)).map((m) => m.data.i)).toEqual([0, 1, 2, 3, 4]);
      expect(one.got[0]).toMatchObject({ topic: 'orders', data: { i: 0, storeId: 's1', nested: { ok: true } } });
      expect(typeof one.got[0].publishedAt).toBe('number');
    });

    it('carries the id a message was published with beside its data, or an id of its own', async () => {
      const [a, b] = adapter.pair();
      const c = collector();
      await b.subscribe('ids', c.handler);
      await a.publish('ids', { n: 1 }, '6f1c1d8e-0b7c-4d52-9a7e-3a8e2f0c5b11');
      await a.publish('ids', { n: 2 });
      const [given, made] = await c.until(2);
      expect(given).toMatchObject({ id: '6f1c1d8e-0b7c-4d52-9a7e-3a8e2f0c5b11', data: { n: 1 } });
      expect(given.data).toEqual({ n: 1 });
      expect(typeof made.id).toBe('string');
      expect(made.id).not.toBe(given.id);
    });

    it('reaches a subscriber on another replica', async () => {
      const [a, b] = adapter.pair();
      const far = collector();
      await b.subscribe('cross', far.handler);
      await a.publish('cross', { hello: 'world' });
      expect((await far.until(1))[0].data).toEqual({ hello: 'world' });
    });

    it('does not deliver what was published before the subscription, nor other topics', async () => {
      const [a] = adapter.pair();
      await a.publish('late', { n: 1 });
      const c = collector();
      await a.subscribe('late', c.handler);
      await a.publish('other', { n: 2 });
      await a.publish('late', { n: 3 });
      expect((await c.until(1)).map((m) => m.data.n)).toEqual([3]);
      await settle();
      expect(c.got).toHaveLength(1);
    });

    it('starts a topic consumer with its first subscriber and stops it with the last', async () => {
      const [a] = adapter.pair();
      const first = collector();
      const second = collector();
      expect(a.activeTopics()).not.toContain('life');
      const stopFirst = await a.subscribe('life', first.handler);
      const stopSecond = await a.subscribe('life', second.handler);
      expect(a.activeTopics().filter((t) => t === 'life')).toEqual(['life']);
      stopFirst();
      expect(a.activeTopics()).toContain('life');
      await a.publish('life', { n: 1 });
      await second.until(1);
      stopSecond();
      expect(a.activeTopics()).not.toContain('life');
      await a.publish('life', { n: 2 });
      await settle();
      expect(first.got).toHaveLength(0);
      expect(second.got.map((m) => m.data.n)).toEqual([1]);
    });

    it('keeps delivering to the others when one handler throws', async () => {
      const [a] = adapter.pair();
      const ok = collector();
      await a.subscribe('throwing', () => {
        throw new Error('handler bug');
      });
      await a.subscribe('throwing', ok.handler);
      await a.publish('throwing', { n: 1 });
      await a.publish('throwing', { n: 2 });
      expect((await ok.until(2)).map((m) => m.data.n)).toEqual([1, 2]);
    });

    it('picks up a topic subscribed while another is being read', async () => {
      const [a, b] = adapter.pair();
      const first = collector();
      await b.subscribe('busy-1', first.handler);
      await new Promise((r) => setTimeout(r, 50)); // the reader is now blocked on busy-1
      const second = collector();
      await b.subscribe('busy-2', second.handler);
      const started = Date.now();
      await a.publish('busy-2', { n: 1 });
      await second.until(1);
      expect(second.got).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it('hands each message to one member of a consumer group, across replicas; each group gets every message', async () => {
      const [a, b] = adapter.pair();
      const seen: { member: string; n: number }[] = [];
      const other: number[] = [];
      const fanOut = collector();
      const member = (name: string) => async (m: BrokerMessage) => {
        await new Promise((r) => setTimeout(r, 1)); // work takes time
        seen.push({ member: name, n: m.data.n as number });
      };
      const stops = [await a.consume('jobs', 'rules', member('a1')), await a.consume('jobs', 'rules', member('a2')), await b.consume('jobs', 'rules', member('b1'))];
      stops.push(await b.consume('jobs', 'audit', (m) => void other.push(m.data.n as number)));
      await a.subscribe('jobs', fanOut.handler);
      for (let n = 0; n < 30; n++) await (n % 2 ? a : b).publish('jobs', { n });
      const deadline = Date.now() + 5000;
      while ((seen.length < 30 || other.length < 30) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await settle();
      expect(seen.map((s) => s.n).sort((x, y) => x - y)).toEqual([...Array(30).keys()]);
      expect(other).toEqual([...Array(30).keys()]);
      expect((await fanOut.until(30)).map((m) => m.data.n)).toEqual([...Array(30).keys()]);
      await Promise.all(stops.map((stop) => stop()));
    });

    it('a member that left gets nothing more, the others go on, and a failing handler does not stop its group', async () => {
      const [a, b] = adapter.pair();
      const kept = collector();
      let failures = 0;
      let leftGot = 0;
      const leave = await a.consume('work', 'g', () => void leftGot++);
      await b.consume('work', 'g', (m) => {
        if (m.data.n === 0) {
          failures++;
          throw new Error('handler bug');
        }
        kept.handler(m);
      });
      await leave();
      for (let n = 0; n < 4; n++) await a.publish('work', { n });
      expect((await kept.until(3)).map((m) => m.data.n)).toEqual([1, 2, 3]);
      await settle();
      expect({ failures, leftGot }).toEqual({ failures: 1, leftGot: 0 });
    });

    it('delivers to a group only what is published after its first member joined', async () => {
      const [a] = adapter.pair();
      await a.publish('fresh', { n: 1 });
      const c = collector();
      await a.consume('fresh', 'g', c.handler);
      await a.publish('fresh', { n: 2 });
      expect((await c.until(1)).map((m) => m.data.n)).toEqual([2]);
      await settle();
      expect(c.got).toHaveLength(1);
    });
  });
}

// What only a broker outliving its processes can show: a member that died holding a message.
describeIf(REDIS_URL, 'needs REDIS_URL')('broker contract: redis streams consumer groups', () => {
  it('a message a dead member took and never acknowledged is handled by a live member after the idle time', async () => {
    const prefix = `test:${randomBytes(4).toString('hex')}:`;
    prefixes.push(prefix);
    const redis = new Redis(REDIS_URL!);
    try {
      const key = `${prefix}orphans`;
      // A member of another process takes the message and dies before XACK.
      await redis.xgroup('CREATE', key, 'rules', '$', 'MKSTREAM');
      await redis.xadd(key, '*', 'd', JSON.stringify({ n: 7 }), 't', String(Date.now()));
      const taken = (await redis.call('XREADGROUP', 'GROUP', 'rules', 'dead-member', 'COUNT', '10', 'STREAMS', key, '>')) as [string, unknown[]][];
      expect(taken[0][1]).toHaveLength(1);

      const broker = new RedisStreamsBroker({ url: REDIS_URL!, prefix, maxLen: 100, claimIdleMs: 300 });
      opened.push(broker);
      const c = collector();
      const started = Date.now();
      await broker.consume('orphans', 'rules', c.handler);
      expect((await c.until(1)).map((m) => m.data.n)).toEqual([7]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250); // not before it was abandoned for claimIdleMs
      await waitUntil(async () => ((await redis.call('XPENDING', key, 'rules')) as [number])[0] === 0);
      await settle();
      expect(c.got).toHaveLength(1);
    } finally {
      await redis.quit();
    }
  });
});

// Needs only the redis-server binary: the test stops a Redis of its own.
describeIf(privateServersAvailable, 'needs redis-server and the PostgreSQL binaries')('redis streams broker: closing during a Redis outage', () => {
  it('close() returns while a subscriber and a consumer group are waiting for Redis to come back', async () => {
    const redis = await PrivateRedis.start();
    const broker = new RedisStreamsBroker({ url: redis.url, prefix: 'outage:', maxLen: 100, blockMs: 200 });
    try {
      await broker.subscribe('live', () => undefined);
      await broker.consume('rules', 'rules', () => undefined);
      await redis.stop();
      // the blocked reads are now queued on connections that are reconnecting
      await new Promise((r) => setTimeout(r, 300));
      await broker.close();
    } finally {
      await redis.stop();
    }
  });
});

async function waitUntil(probe: () => Promise<boolean>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
