import { Queue, Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { closeRedis } from '../../platform/redis/close-redis.js';
import { JobQueue, backoffDelay, type JobProcessor } from './job-queue.js';


// The producer fails at once while Redis is down (the request that enqueues answers 503, or the
// row the job is for stays due for its owner's sweep) instead of waiting for Redis to return; a Redis
// that answers nothing fails it after two seconds. Reconnection is retried every second at most.
const PRODUCER_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: 2000,
  retryStrategy: (times) => Math.min(times * 50, 1000),
};
// The worker waits on a blocking command, which BullMQ requires to retry for ever.
const WORKER_OPTIONS: RedisOptions = { maxRetriesPerRequest: null };

const CLOSE_READY_WAIT_MS = 2000;

// Whether every connection is (or becomes within `ms`) ready.
async function allReady(connections: readonly Redis[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (connections.some((c) => c.status !== 'ready')) {
    if (Date.now() >= deadline || connections.some((c) => c.status === 'end')) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

export interface BullMqOptions {
  // The queue's name (`notifications`, `webhooks`): queues of one prefix are apart by it.
  name: string;
  redisUrl: string;
  // Key prefix, so deployments (and test runs) sharing a Redis do not share jobs.
  prefix: string;
  concurrency: number;
  maxAttempts: number;
  backoffMs: number;
  // How long a worker owns a job before another may take it (a dead worker's jobs come back).
  lockDurationMs?: number;
}

// BullMQ on Redis: jobs survive restarts and are shared by every replica. A job whose worker
// died is handed to another once its lock expires; the processor then finds its row already
// done and does nothing again.
export class BullMqQueue extends JobQueue {
  private readonly connections: Redis[] = [];
  private readonly queue: Queue;
  private worker?: Worker;

  constructor(private readonly options: BullMqOptions) {
    super();
    this.queue = new Queue(options.name, { connection: this.connection(PRODUCER_OPTIONS), prefix: options.prefix });
    // A Redis outage surfaces where it matters, as a failed enqueue (503); without a listener
    // BullMQ prints every reconnection failure.
    this.queue.on('error', () => undefined);
  }

  private connection(options: RedisOptions): Redis {
    const redis = new Redis(this.options.redisUrl, options);
    this.connections.push(redis);
    return redis;
  }

  async enqueue(id: string): Promise<void> {
    await this.queue.add(
      'deliver',
      { id },
      {
        jobId: id,
        attempts: this.options.maxAttempts,
        backoff: { type: 'jittered' },
        removeOnComplete: true,
        // The row records failures. A job BullMQ fails itself (a worker died during it twice:
        // "stalled more than allowable limit") leaves its row queued; removed, the job is added
        // again by the next sweep, where a kept one would make that add a no-op for ever.
        removeOnFail: true,
      },
    );
  }

  async depth(): Promise<number> {
    const counts = await this.queue.getJobCounts('waiting', 'delayed', 'prioritized');
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  }

  async start(processor: JobProcessor): Promise<void> {
    const { maxAttempts, backoffMs } = this.options;
    this.worker = new Worker(
      this.options.name,
      // `notificationId`: a job an earlier release queued.
      (job) => processor((job.data.id ?? job.data.notificationId) as string, job.attemptsMade + 1, maxAttempts),
      {
        connection: this.connection(WORKER_OPTIONS),
        prefix: this.options.prefix,
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockDurationMs ?? 30_000,
        stalledInterval: Math.min(30_000, this.options.lockDurationMs ?? 30_000),
        settings: { backoffStrategy: (attemptsMade: number) => backoffDelay(backoffMs, attemptsMade) },
      },
    );
    // Failures are recorded on the job's row by its processor; the worker's own events add nothing.
    this.worker.on('error', () => undefined);
    await this.worker.waitUntilReady();
  }

  // Jobs in hand are finished first while Redis is up (a connection still reconnecting after a
  // short outage is given a moment). While it is down they cannot be acknowledged anyway (their
  // locks expire and another worker takes them), and a graceful close would wait for Redis to
  // come back: the worker is then closed at once.
  async close(): Promise<void> {
    const redisUp = await allReady(this.connections, CLOSE_READY_WAIT_MS);
    await this.worker?.close(!redisUp);
    await this.queue.close();
    await Promise.all(this.connections.map(closeRedis));
  }
}
