import { Logger } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';

export interface InvalidationSubscriber {
  // This key (without its prefix) was written, deleted or expired in Redis.
  changed(key: string): void;
  // Invalidations may have been missed (the connection dropped, or Redis was flushed): forget
  // everything they guard.
  reset(): void;
}

const CHANNEL = '__redis__:invalidate';

// Redis's own announcements of changed keys (server-assisted client-side caching, `CLIENT
// TRACKING` in broadcast mode), so a process may keep copies of keys under the subscribed
// prefixes. Redis announces every write, deletion and expiry of such a key, whichever client made
// it (another replica, one of an older version, an operator), on a connection of this process's
// own. `listening` is true only while that connection is subscribed: a copy kept while it is
// false could miss its invalidation, so none may be kept or served then. A Redis that cannot track
// (before 6.0) leaves it false, and the copies are never used.
export class RedisKeyInvalidations {
  private readonly logger = new Logger('RedisKeyInvalidations');
  private readonly subscribers = new Map<string, InvalidationSubscriber>();
  private connection?: Redis;
  // Bumped when the connection drops: a subscription set up before is not the current one.
  private drops = 0;
  private warned = false;
  private closed = false;
  listening = false;

  constructor(
    private readonly url: string,
    private readonly options: RedisOptions,
  ) {}

  // Before start(): the prefixes are given to Redis when tracking begins.
  subscribe(prefix: string, subscriber: InvalidationSubscriber): void {
    if (this.connection) throw new Error(`RedisKeyInvalidations: subscribe "${prefix}" before start()`);
    this.subscribers.set(prefix, subscriber);
  }

  start(): void {
    if (this.connection || !this.subscribers.size) return;
    const connection = new Redis(this.url, { ...this.options, enableAutoPipelining: false, autoResubscribe: false, lazyConnect: true });
    this.connection = connection;
    // The main connection's watcher reports outages; this one only stops listening.
    connection.on('error', () => undefined);
    connection.on('close', () => this.dropped());
    connection.on('ready', () => void this.track(connection));
    connection.on('messageBuffer', (channel: Buffer, keys: Buffer[] | null) => {
      if (channel.toString() === CHANNEL) this.deliver(keys);
    });
    connection.connect().catch(() => undefined);
  }

  // A connection still being set up (a boot refused right after start) is dropped at once.
  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    const connection = this.connection;
    if (!connection) return;
    connection.removeAllListeners('close');
    if (connection.status !== 'ready') return connection.disconnect();
    await connection.quit().catch(() => connection.disconnect());
  }

  // On every (re)connection: tracking is a property of the connection, so it starts again.
  private async track(connection: Redis): Promise<void> {
    const drops = this.drops;
    try {
      const id = String(await connection.client('ID'));
      const prefixes = [...this.subscribers.keys()].flatMap((prefix) => ['PREFIX', prefix]);
      await connection.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'BCAST', ...prefixes);
      await connection.subscribe(CHANNEL);
      if (drops === this.drops && connection.status === 'ready' && !this.closed) this.listening = true;
    } catch (error) {
      if (this.warned || this.closed) return;
      this.warned = true;
      this.logger.warn(`Redis does not announce changed keys (${(error as Error).message}); cached copies are read from Redis every time`);
    }
  }

  private dropped(): void {
    this.drops++;
    this.listening = false;
    for (const subscriber of this.subscribers.values()) subscriber.reset();
  }

  // `null`: the whole database was flushed.
  private deliver(keys: Buffer[] | null): void {
    if (!keys) {
      for (const subscriber of this.subscribers.values()) subscriber.reset();
      return;
    }
    for (const raw of keys) {
      const key = raw.toString();
      for (const [prefix, subscriber] of this.subscribers) {
        if (key.startsWith(prefix)) subscriber.changed(key.slice(prefix.length));
      }
    }
  }
}
