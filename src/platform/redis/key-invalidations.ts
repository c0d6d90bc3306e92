import { Logger } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import { closeRedis } from './close-redis.js';

export interface InvalidationSubscriber {
  // This key (without its prefix) was written, deleted or expired in Redis.
  changed(key: string): void;
  // Invalidations may have been missed (the connection dropped, or Redis was flushed): forget
  // everything they guard.
  reset(): void;
}

const CHANNEL = '__redis__:invalidate';
// The connection only receives, so a peer gone silently (a half-open TCP flow: a NAT's idle
// timeout, a host lost without closing) would never be noticed by a write. A PING every second
// says it is alive: an answer to a PING sent at t means every announcement Redis sent before it
// has arrived, so copies are served until t + FRESH_MS and no longer. A PING unanswered for
// DEAD_MS ends the connection, which forgets every copy and connects again.
const HEARTBEAT_MS = 1_000;
const FRESH_MS = 2_000;
const DEAD_MS = 3_000;

// Redis's own announcements of changed keys (server-assisted client-side caching, `CLIENT
// TRACKING` in broadcast mode), so a process may keep copies of keys under the subscribed
// prefixes. Redis announces every write, deletion and expiry of such a key, whichever client made
// it (another replica, one of an older version, an operator), on a connection of this process's
// own. `listening` is true only while that connection is subscribed and answered a PING lately: a
// copy kept or served while it is false could miss its invalidation. A Redis that cannot track
// (before 6.0) leaves it false, and the copies are never used.
export class RedisKeyInvalidations {
  private readonly logger = new Logger('RedisKeyInvalidations');
  private readonly subscribers = new Map<string, InvalidationSubscriber>();
  private connection?: Redis;
  private heartbeat?: NodeJS.Timeout;
  // Bumped when the connection drops: what was set up or asked before belongs to an older one.
  private drops = 0;
  private subscribed = false;
  private freshUntil = 0;
  private pingSentAt?: number;
  private warned = false;
  private closed = false;

  // `main`: the connection the cached values are read on. When it reconnects (a failover may
  // have moved it to another server), this one does too, so both speak to the same server.
  constructor(
    private readonly url: string,
    private readonly options: RedisOptions,
    private readonly main?: Redis,
  ) {}

  get listening(): boolean {
    return this.subscribed && performance.now() < this.freshUntil;
  }

  // Before start(): the prefixes are given to Redis when tracking begins.
  subscribe(prefix: string, subscriber: InvalidationSubscriber): void {
    if (this.connection) throw new Error(`RedisKeyInvalidations: subscribe "${prefix}" before start()`);
    this.subscribers.set(prefix, subscriber);
  }

  start(): void {
    if (this.connection || !this.subscribers.size) return;
    const connection = new Redis(this.url, {
      ...this.options,
      enableAutoPipelining: false,
      autoResubscribe: false,
      // Commands of a dropped connection fail rather than run on the next one.
      autoResendUnfulfilledCommands: false,
      lazyConnect: true,
    });
    this.connection = connection;
    // The main connection's watcher reports outages; this one only stops listening.
    connection.on('error', () => undefined);
    connection.on('close', () => this.dropped());
    connection.on('ready', () => {
      // A peer's end is known from the socket a turn before ioredis reports the close.
      connection.stream.once('end', () => this.dropped());
      void this.track(connection);
    });
    connection.on('messageBuffer', (channel: Buffer, keys: Buffer[] | null) => {
      if (channel.toString() === CHANNEL) this.deliver(keys);
    });
    this.main?.on('close', this.restart);
    this.heartbeat = setInterval(() => this.beat(connection), HEARTBEAT_MS);
    this.heartbeat.unref();
    connection.connect().catch(() => undefined);
  }

  // A connection still being set up (a boot refused right after start) is dropped at once.
  async close(): Promise<void> {
    this.closed = true;
    this.subscribed = false;
    clearInterval(this.heartbeat);
    this.main?.off('close', this.restart);
    const connection = this.connection;
    if (!connection) return;
    connection.removeAllListeners('close');
    await closeRedis(connection);
  }

  // On every (re)connection: tracking is a property of the connection, so it starts again.
  private async track(connection: Redis): Promise<void> {
    const drops = this.drops;
    const startedAt = performance.now();
    try {
      const id = String(await connection.client('ID'));
      const prefixes = [...this.subscribers.keys()].flatMap((prefix) => ['PREFIX', prefix]);
      await connection.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'BCAST', ...prefixes);
      await connection.subscribe(CHANNEL);
      if (drops !== this.drops || connection.status !== 'ready' || this.closed) return;
      this.subscribed = true;
      this.freshUntil = startedAt + FRESH_MS;
    } catch (error) {
      // A command cut short by a drop is retried with the next connection; a refusal is Redis's.
      if (drops !== this.drops || this.warned || this.closed) return;
      this.warned = true;
      this.logger.warn(`Redis does not announce changed keys (${(error as Error).message}); cached copies are read from Redis every time`);
    }
  }

  private beat(connection: Redis): void {
    if (!this.subscribed) return;
    const now = performance.now();
    if (this.pingSentAt !== undefined) {
      if (now - this.pingSentAt < DEAD_MS) return;
      // Silent for too long: dropped and connected again.
      this.dropped();
      connection.disconnect(true);
      return;
    }
    const drops = this.drops;
    this.pingSentAt = now;
    connection.ping().then(
      () => {
        if (drops !== this.drops) return;
        this.pingSentAt = undefined;
        this.freshUntil = now + FRESH_MS;
      },
      () => undefined,
    );
  }

  // The main connection dropped: this one connects again too (if it is up), to whatever server
  // the main one finds.
  private readonly restart = (): void => {
    if (!this.subscribed) return;
    this.dropped();
    this.connection?.disconnect(true);
  };

  private dropped(): void {
    this.drops++;
    this.pingSentAt = undefined;
    this.subscribed = false;
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
