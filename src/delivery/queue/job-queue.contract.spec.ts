import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { describeIf } from '../../../test/conditions.js';
import { BullMqQueue } from './bullmq-queue.js';
import { InProcessQueue } from './in-process-queue.js';
import type { JobQueue } from './job-queue.js';

// One contract, both adapters: what the notification worker and the webhook deliveries rely on
// from a job queue.
const REDIS_URL = process.env.REDIS_URL;

interface Adapter {
  name: string;
  make(options: { concurrency: number; maxAttempts: number; backoffMs: number }): JobQueue;
  skip?: string;
}

const prefixes: string[] = [];
const opened: JobQueue[] = [];
const adapters: Adapter[] = [
  { name: 'in process', make: ({ concurrency, maxAttempts, backoffMs }) => new InProcessQueue(concurrency, maxAttempts, backoffMs) },
  {
    name: 'BullMQ on Redis',
    skip: REDIS_URL ? undefined : 'needs REDIS_URL',
    make: (options) => {
      const prefix = `test:${randomBytes(4).toString('hex')}:bull`;
      prefixes.push(prefix);
      return new BullMqQueue({ name: 'contract', redisUrl: REDIS_URL!, prefix, ...options });
    },
  },
];

afterAll(async () => {
  await Promise.all(opened.map((q) => q.close()));
  if (!REDIS_URL || !prefixes.length) return;
  const redis = new Redis(REDIS_URL);
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  }
  await redis.quit();
});

async function until<T>(probe: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const adapter of adapters) {
  describeIf(!adapter.skip, adapter.skip ?? '')(`job queue contract: ${adapter.name}`, () => {
    const open = (options = { concurrency: 4, maxAttempts: 1, backoffMs: 10 }) => {
      const queue = adapter.make(options);
      opened.push(queue);
      return queue;
    };

    it('runs each enqueued id once, with its attempt number', async () => {
      const queue = open();
      const ran: Array<[string, number]> = [];
      await queue.start(async (id, attempt) => void ran.push([id, attempt]));
      for (const id of ['a', 'b', 'c']) await queue.enqueue(id);
      await until(() => (ran.length === 3 ? true : undefined));
      expect(ran.sort()).toEqual([['a', 1], ['b', 1], ['c', 1]]);
    });

    it('an id enqueued twice while waiting runs once; enqueued again after it ran, it runs again', async () => {
      const queue = open();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const ran: string[] = [];
      await queue.enqueue('same');
      await queue.enqueue('same');
      await queue.start(async (id) => {
        ran.push(id);
        await gate;
      });
      await until(() => (ran.length ? true : undefined));
      release();
      await new Promise((r) => setTimeout(r, 300));
      expect(ran).toEqual(['same']);
      await queue.enqueue('same');
      await until(() => (ran.length === 2 ? true : undefined));
    });

    it('a job that throws is tried again, up to maxAttempts, with the attempt number', async () => {
      const queue = open({ concurrency: 2, maxAttempts: 3, backoffMs: 10 });
      const attempts: number[] = [];
      await queue.start(async (_id, attempt, maxAttempts) => {
        attempts.push(attempt);
        expect(maxAttempts).toBe(3);
        throw new Error('down');
      });
      await queue.enqueue('failing');
      await until(() => (attempts.length === 3 ? true : undefined));
      await new Promise((r) => setTimeout(r, 300));
      expect(attempts).toEqual([1, 2, 3]);
    });

    it('runs at most `concurrency` jobs at once', async () => {
      const queue = open({ concurrency: 2, maxAttempts: 1, backoffMs: 10 });
      let running = 0;
      let most = 0;
      let done = 0;
      await queue.start(async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 50));
        running--;
        done++;
      });
      for (let i = 0; i < 8; i++) await queue.enqueue(`c${i}`);
      await until(() => (done === 8 ? true : undefined));
      expect(most).toBe(2);
    });

    it('close waits for the jobs under way', async () => {
      const queue = open();
      let finished = false;
      let started = false;
      await queue.start(async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 200));
        finished = true;
      });
      await queue.enqueue('long');
      await until(() => (started ? true : undefined));
      await queue.close();
      expect(finished).toBe(true);
    });

    it('depth counts what waits', async () => {
      const queue = open();
      for (const id of ['w1', 'w2', 'w3']) await queue.enqueue(id);
      expect(await queue.depth()).toBe(3);
      const ran: string[] = [];
      await queue.start(async (id) => void ran.push(id));
      await until(() => (ran.length === 3 ? true : undefined));
      const drained = Date.now() + 5000;
      while ((await queue.depth()) > 0 && Date.now() < drained) await new Promise((r) => setTimeout(r, 20));
      expect(await queue.depth()).toBe(0);
    });
  });
}
