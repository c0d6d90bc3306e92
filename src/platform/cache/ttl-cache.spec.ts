import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { describeIf, itIf } from '../../../test/conditions.js';
import { waitFor } from '../../../test/helpers.js';
import type { InvalidationSubscriber } from '../redis/key-invalidations.js';
import { RedisKeyInvalidations } from '../redis/key-invalidations.js';
import { REDIS_OPTIONS } from '../redis/redis.module.js';
import { LruTtlCache, NearRedisTtlCache, RedisTtlCache, type TtlCache } from './ttl-cache.js';

// One contract, every adapter: what the session and API-key caches rely on. Then what the
// in-process copies in front of Redis must never do: serve a value Redis no longer holds.
const REDIS_URL = process.env.REDIS_URL;
const needsRedis = REDIS_URL ? undefined : 'needs REDIS_URL';

interface Value {
  v: number;
}

const connections: Redis[] = [];
const listeners: RedisKeyInvalidations[] = [];
const prefixes: string[] = [];

function redis(): Redis {
  const connection = new Redis(REDIS_URL!, REDIS_OPTIONS);
  connections.push(connection);
  return connection;
}

function newPrefix(): string {
  const prefix = `test:${randomBytes(4).toString('hex')}:cache:`;
  prefixes.push(prefix);
  return prefix;
}

// A replica's cache: its own connections, as a process of the service holds them.
async function replica(prefix: string, name = `cache-test-${randomBytes(4).toString('hex')}`): Promise<{ cache: NearRedisTtlCache<Value>; invalidations: RedisKeyInvalidations; name: string }> {
  const invalidations = new RedisKeyInvalidations(REDIS_URL!, { ...REDIS_OPTIONS, connectionName: name });
  listeners.push(invalidations);
  const cache = new NearRedisTtlCache<Value>(new RedisTtlCache<Value>(redis(), prefix), invalidations, prefix, 100);
  invalidations.start();
  await until(() => invalidations.listening);
  return { cache, invalidations, name };
}

// Until the condition holds (test/helpers' waitFor, for a yes or no).
const until = (done: () => boolean | Promise<boolean>, ms = 3_000) => waitFor('the condition', async () => ((await done()) ? true : undefined), ms);

// Cuts the connection of that name, as Redis or a network would.
async function killClient(raw: Redis, name: string): Promise<void> {
  const list = String(await raw.client('LIST'));
  const ids = [...list.matchAll(/id=(\d+) [^\n]*name=(\S+)/g)].filter((m) => m[2] === name).map((m) => m[1]);
  expect(ids).toHaveLength(1);
  await raw.client('KILL', 'ID', ids[0]);
}

afterAll(async () => {
  await Promise.all(listeners.map((l) => l.close()));
  if (REDIS_URL && prefixes.length) {
    const cleaner = redis();
    for (const prefix of prefixes) {
      const keys = await cleaner.keys(`${prefix}*`);
      if (keys.length) await cleaner.del(...keys);
    }
  }
  await Promise.all(connections.map((c) => c.quit()));
});

const adapters: { name: string; skip?: string; make(): Promise<TtlCache<Value>> }[] = [
  { name: 'in process (LRU)', make: async () => new LruTtlCache<Value>(100) },
  { name: 'Redis', skip: needsRedis, make: async () => new RedisTtlCache<Value>(redis(), newPrefix()) },
  { name: 'Redis with copies in process', skip: needsRedis, make: async () => (await replica(newPrefix())).cache },
];

describe.each(adapters)('TtlCache: $name', ({ skip, make }) => {
  const test = itIf(!skip, skip ?? '');

  test('answers what was set, until it is deleted', async () => {
    const cache = await make();
    expect(await cache.get('a')).toBeUndefined();
    await cache.set('a', { v: 1 }, 60_000);
    await cache.set('b', { v: 2 }, 60_000);
    expect(await cache.get('a')).toEqual({ v: 1 });
    expect(await cache.get('a')).toEqual({ v: 1 });
    await cache.set('a', { v: 3 }, 60_000);
    expect(await cache.get('a')).toEqual({ v: 3 });
    await cache.delete(['a', 'b']);
    expect(await cache.get('a')).toBeUndefined();
    expect(await cache.get('b')).toBeUndefined();
    await cache.delete([]);
  });

  test('forgets a value when its time is up', async () => {
    const cache = await make();
    // Long enough that a loaded machine (the suites run three at a time) still reads it back.
    await cache.set('short', { v: 1 }, 1_000);
    expect(await cache.get('short')).toEqual({ v: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    expect(await cache.get('short')).toBeUndefined();
  });
});

describe('in-process answers, given together on the next turn', () => {
  it('answers every read of a turn, and a read its answer leads to, each with its own value', async () => {
    const cache = new LruTtlCache<Value>(1_000);
    for (let v = 0; v < 500; v++) await cache.set(`k${v}`, { v }, 60_000);
    let late: Promise<Value | undefined> | undefined;
    const reads = Array.from({ length: 500 }, (_, v) =>
      cache.get(`k${v}`).then((value) => {
        if (v === 0) late = cache.get('k499');
        return value?.v;
      }),
    );
    expect(await Promise.all(reads)).toEqual(Array.from({ length: 500 }, (_, v) => v));
    expect(await late).toEqual({ v: 499 });
  });
});

const describeRedis = describeIf(REDIS_URL, 'needs REDIS_URL');

describeRedis('copies in process: never a value Redis no longer holds', () => {
  it('a copy read on A goes when B (another replica) changes or deletes the key', async () => {
    const prefix = newPrefix();
    const [a, b] = await Promise.all([replica(prefix), replica(prefix)]);
    await b.cache.set('s', { v: 1 }, 60_000);
    expect(await a.cache.get('s')).toEqual({ v: 1 });
    await b.cache.set('s', { v: 2 }, 60_000);
    await until(async () => (await a.cache.get('s'))?.v === 2);
    await b.cache.delete(['s']);
    await until(async () => (await a.cache.get('s')) === undefined);
  });

  it('a copy goes when any other client of Redis writes the key (an older replica, an operator)', async () => {
    const prefix = newPrefix();
    const { cache } = await replica(prefix);
    const raw = redis();
    await raw.set(`${prefix}s`, JSON.stringify({ v: 1 }));
    expect(await cache.get('s')).toEqual({ v: 1 });
    await raw.set(`${prefix}s`, JSON.stringify({ v: 2 }));
    await until(async () => (await cache.get('s'))?.v === 2);
    await raw.del(`${prefix}s`);
    await until(async () => (await cache.get('s')) === undefined);
  });

  it('a copy goes when the key expires in Redis', async () => {
    const prefix = newPrefix();
    const { cache } = await replica(prefix);
    const raw = redis();
    await raw.set(`${prefix}s`, JSON.stringify({ v: 1 }), 'PX', 200);
    expect(await cache.get('s')).toEqual({ v: 1 });
    await until(async () => (await cache.get('s')) === undefined);
  });

  it('while its announcements cannot be heard, nothing is answered from copies; they are used again once they can', async () => {
    const prefix = newPrefix();
    const { cache, invalidations, name } = await replica(prefix);
    const raw = redis();
    await raw.set(`${prefix}s`, JSON.stringify({ v: 1 }));
    expect(await cache.get('s')).toEqual({ v: 1 });
    // The announcing connection is cut; the key changes before it is back.
    await killClient(raw, name);
    await until(() => !invalidations.listening);
    await raw.set(`${prefix}s`, JSON.stringify({ v: 2 }));
    expect(await cache.get('s')).toEqual({ v: 2 });
    await until(() => invalidations.listening);
    expect(await cache.get('s')).toEqual({ v: 2 });
    await raw.set(`${prefix}s`, JSON.stringify({ v: 3 }));
    await until(async () => (await cache.get('s'))?.v === 3);
  });
});

// A TCP proxy to Redis that can go silent: it stops passing bytes either way and closes nothing,
// as a NAT that forgot the flow does.
async function silenceableProxy(): Promise<{ url: string; silence(): void; close(): Promise<void> }> {
  const target = new URL(REDIS_URL!);
  const sockets: Socket[] = [];
  let silent = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.push(client, upstream);
    client.on('data', (data) => void (silent || upstream.write(data)));
    upstream.on('data', (data) => void (silent || client.write(data)));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(REDIS_URL!);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    silence: () => void (silent = true),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describeRedis('copies in process, when the announcing connection fails without a word', () => {
  it('a connection gone silent (no close ever comes) stops the copies within seconds', async () => {
    const proxy = await silenceableProxy();
    const invalidations = new RedisKeyInvalidations(proxy.url, REDIS_OPTIONS);
    try {
      const prefix = newPrefix();
      const cache = new NearRedisTtlCache<Value>(new RedisTtlCache<Value>(redis(), prefix), invalidations, prefix, 100);
      invalidations.start();
      await until(() => invalidations.listening);
      const raw = redis();
      await raw.set(`${prefix}s`, JSON.stringify({ v: 1 }));
      await new Promise((resolve) => setTimeout(resolve, 200)); // the write's own announcement has come
      expect(await cache.get('s')).toEqual({ v: 1 });
      proxy.silence();
      await raw.del(`${prefix}s`); // its announcement never arrives
      const deletedAt = Date.now();
      expect(await cache.get('s')).toEqual({ v: 1 }); // the copy, as nothing says otherwise yet
      await until(async () => (await cache.get('s')) === undefined, 6_000);
      // The last answered PING vouches for two seconds at most (a copy's own limit is ten).
      expect(Date.now() - deletedAt).toBeLessThan(3_000);
    } finally {
      await invalidations.close();
      await proxy.close();
    }
  });

  it('when the connection the values are read on drops, the announcing one starts again with it', async () => {
    const name = `cache-test-${randomBytes(4).toString('hex')}`;
    const main = new Redis(REDIS_URL!, { ...REDIS_OPTIONS, connectionName: name });
    connections.push(main);
    const invalidations = new RedisKeyInvalidations(REDIS_URL!, REDIS_OPTIONS, main);
    listeners.push(invalidations);
    const prefix = newPrefix();
    const cache = new NearRedisTtlCache<Value>(new RedisTtlCache<Value>(main, prefix), invalidations, prefix, 100);
    invalidations.start();
    await until(() => invalidations.listening);
    const raw = redis();
    await raw.set(`${prefix}s`, JSON.stringify({ v: 1 }));
    expect(await cache.get('s')).toEqual({ v: 1 });
    await killClient(raw, name);
    await until(() => !invalidations.listening);
    await until(() => invalidations.listening);
    await raw.set(`${prefix}s`, JSON.stringify({ v: 2 }));
    await until(async () => (await cache.get('s'))?.v === 2);
  });
});

describeRedis('copies in process, the announcements in the test\'s hands', () => {
  // Redis as the far cache; the announcements are delivered (or not) by the test, so what the
  // copies do in between is seen: a change made by the raw client is never announced here.
  async function held() {
    const prefix = newPrefix();
    let subscriber: InvalidationSubscriber | undefined;
    const source = { listening: true, subscribe: (_: string, s: InvalidationSubscriber) => void (subscriber = s) };
    const cache = new NearRedisTtlCache<Value>(new RedisTtlCache<Value>(redis(), prefix), source, prefix, 100);
    const raw = redis();
    const write = (v: number) => raw.set(`${prefix}s`, JSON.stringify({ v }));
    return { cache, source, subscriber: subscriber!, write };
  }

  it('a copy is answered without asking Redis until its change is announced', async () => {
    const { cache, subscriber, write } = await held();
    await write(1);
    expect(await cache.get('s')).toEqual({ v: 1 });
    await write(2);
    expect(await cache.get('s')).toEqual({ v: 1 });
    subscriber.changed('s');
    expect(await cache.get('s')).toEqual({ v: 2 });
  });

  it('a read under way when a change is announced is answered but not kept (it may predate the change)', async () => {
    const { cache, subscriber, write } = await held();
    await write(1);
    const reading = cache.get('s');
    await new Promise((resolve) => setImmediate(resolve)); // the read has left for Redis
    subscriber.changed('s');
    expect(await reading).toEqual({ v: 1 });
    await write(2);
    expect(await cache.get('s')).toEqual({ v: 2 });
  });

  it('nothing is kept while announcements cannot be heard, and a reset forgets every copy', async () => {
    const { cache, source, subscriber, write } = await held();
    source.listening = false;
    await write(1);
    expect(await cache.get('s')).toEqual({ v: 1 });
    await write(2);
    expect(await cache.get('s')).toEqual({ v: 2 });
    source.listening = true;
    expect(await cache.get('s')).toEqual({ v: 2 });
    await write(3);
    expect(await cache.get('s')).toEqual({ v: 2 });
    subscriber.reset();
    expect(await cache.get('s')).toEqual({ v: 3 });
  });
});

describeRedis('a Redis that refuses to announce changes', () => {
  it('copies are never used: every read asks Redis, and the boot goes on', async () => {
    const admin = redis();
    const user = `cache-test-${randomBytes(4).toString('hex')}`;
    // Everything but CLIENT TRACKING, as a Redis before 6.0 or an ACL without it.
    await admin.call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all', '-client|tracking');
    try {
      const url = new URL(REDIS_URL!);
      url.username = user;
      url.password = 'secret';
      const invalidations = new RedisKeyInvalidations(url.toString(), REDIS_OPTIONS);
      listeners.push(invalidations);
      const prefix = newPrefix();
      const cache = new NearRedisTtlCache<Value>(new RedisTtlCache<Value>(redis(), prefix), invalidations, prefix, 100);
      invalidations.start();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(invalidations.listening).toBe(false);
      await admin.set(`${prefix}s`, JSON.stringify({ v: 1 }));
      expect(await cache.get('s')).toEqual({ v: 1 });
      await admin.set(`${prefix}s`, JSON.stringify({ v: 2 }));
      expect(await cache.get('s')).toEqual({ v: 2 });
    } finally {
      await admin.call('ACL', 'DELUSER', user);
    }
  });
});
