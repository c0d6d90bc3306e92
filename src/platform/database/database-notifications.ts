import { Logger } from '@nestjs/common';
import pg from 'pg';

export interface NotificationSubscriber {
  // A NOTIFY on the channel, with its payload.
  message(payload: string): void;
  // Notifications may have been missed (the listening connection dropped): forget what they guard.
  reset(): void;
}

const RETRY_MS = { first: 100, max: 2_000 };

// PostgreSQL NOTIFY messages reaching this process. On PostgreSQL they arrive on the dedicated
// connection that LISTENs, so every replica hears every change. On the embedded database all
// connections share one session, and a notification arrives on the connection whose transaction
// sent it, before that statement's answer: every connection the pool opens (`clientClass`)
// therefore hands its notifications here too. `listening` is true only while the LISTEN holds;
// a cache that relies on notifications must not serve while it is false.
export class DatabaseNotifications {
  private readonly logger = new Logger('DatabaseNotifications');
  private readonly subscribers = new Map<string, NotificationSubscriber[]>();
  private client?: pg.Client;
  private closed = false;
  private retryMs = RETRY_MS.first;
  private retryTimer?: NodeJS.Timeout;
  listening = false;

  constructor(private readonly url: string) {}

  // The pg client class for the pool: each connection reports its notifications here.
  get clientClass(): typeof pg.Client {
    const deliver = (m: pg.Notification) => this.deliver(m);
    return class NotifyingClient extends pg.Client {
      constructor(config?: string | pg.ClientConfig) {
        super(config);
        this.on('notification', deliver);
      }
    };
  }

  // Returns the way to stop hearing the channel (the LISTEN itself stays).
  subscribe(channel: string, subscriber: NotificationSubscriber): () => void {
    const known = this.subscribers.has(channel);
    this.subscribers.set(channel, [...(this.subscribers.get(channel) ?? []), subscriber]);
    const client = this.client;
    if (!known && this.listening && client) void client.query(`LISTEN "${channel}"`).catch(() => this.drop(client));
    return () => this.subscribers.set(channel, (this.subscribers.get(channel) ?? []).filter((s) => s !== subscriber));
  }

  // Once the application has booted (a refused boot never opens the listening connection).
  start(): void {
    if (!this.closed && !this.client && !this.retryTimer) void this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }

  private deliver(m: pg.Notification): void {
    for (const s of this.subscribers.get(m.channel) ?? []) s.message(m.payload ?? '');
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new (this.clientClass)({ connectionString: this.url, connectionTimeoutMillis: 3_000 });
    this.client = client;
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    try {
      await client.connect();
      for (const channel of this.subscribers.keys()) await client.query(`LISTEN "${channel}"`);
      if (this.client !== client) return;
      if (this.retryMs > RETRY_MS.first) this.logger.log('listening for database notifications again');
      this.listening = true;
      this.retryMs = RETRY_MS.first;
    } catch {
      this.drop(client);
    }
  }

  // The connection is gone: whatever it would have told us may be missed, so every subscriber
  // forgets, and a new connection is tried with backoff.
  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.listening) this.logger.warn('database notifications interrupted; caches that rely on them are bypassed until they resume');
    this.listening = false;
    for (const list of this.subscribers.values()) for (const s of list) s.reset();
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MS.max);
  }
}
