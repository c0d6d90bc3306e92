import { ExtensionCatalogue } from '../../kernel/extensions.js';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { createAdapter } from '@socket.io/redis-adapter';
import { Redis } from 'ioredis';
import { closeRedis } from '../../platform/redis/close-redis.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import type { CorsPolicy } from '../../kernel/cors-policy.js';
import { REDIS_OPTIONS, watchRedis } from '../../platform/redis/redis.module.js';
import { EVENTS_NAMESPACE } from './events.gateway.js';
import { BrokerSection } from '../../delivery/broker/broker.settings.js';

// Socket.IO on the service's HTTP server: CORS from settings `cors` (as the HTTP routes; the
// handshake itself refuses other origins, see EventsService.assertOrigin), and with REDIS_URL the
// Redis adapter, so server-side operations on sockets (disconnects, room queries) reach every
// replica. Events themselves are read from the broker by each replica for its own sockets.
// The event gateway's namespaces are only those of the configured subscriptions: Socket.IO
// creates and keeps a namespace for every name its pattern matches, before the handshake is
// checked, so any other name is refused first (`connect_error` "Invalid namespace").
type IoOptions = Parameters<IoAdapter['createIOServer']>[1];
type IoServer = ReturnType<IoAdapter['createIOServer']>;

export class EventsIoAdapter extends IoAdapter {
  private readonly redis: Redis[] = [];

  constructor(
    app: INestApplicationContext,
    private readonly config: AppConfig,
    private readonly cors: CorsPolicy,
    private readonly extensions: ExtensionCatalogue,
  ) {
    super(app);
  }

  override create(port: number, options?: Parameters<IoAdapter['create']>[1]): ReturnType<IoAdapter['create']> {
    if (options?.namespace !== (EVENTS_NAMESPACE as unknown)) return super.create(port, options);
    const names = new Set([...this.extensions.eventSubscriptions, ...this.config.section(BrokerSection).eventSubscriptions].map((s) => `/events/${s.name}`));
    const match = (name: string, _auth: unknown, next: (err: Error | null, allow: boolean) => void) => next(null, EVENTS_NAMESPACE.test(name) && names.has(name));
    return super.create(port, { ...options, namespace: match } as unknown as typeof options);
  }

  // Typed from IoAdapter: @nestjs/platform-socket.io brings its own copy of socket.io.
  override createIOServer(port: number, options?: IoOptions): IoServer {
    const { cors } = this;
    const server = super.createIOServer(port, {
      ...options,
      // The long-polling transport's CORS headers; WebSocket upgrades are checked at the handshake.
      cors: { origin: (origin: string | undefined, done: (err: Error | null, allow?: boolean) => void) => done(null, cors.isAllowed(origin)), credentials: cors.credentials },
      // Client-to-server messages are `subscribe` with topic names: an oversized one is refused
      // with an `error` by the service, a far larger one closes the connection.
      maxHttpBufferSize: 1024 * 1024,
      // Clients bring socket.io-client themselves: the server does not offer its browser bundle
      // (a file route, and a path test on every HTTP request the service answers).
      serveClient: false,
    } as NonNullable<IoOptions>);
    const url = this.config.env.REDIS_URL;
    if (url) {
      // Listened to like the service's own connection: an outage is logged once, never printed
      // by ioredis as an unhandled error event.
      const logger = new Logger('Redis');
      const pub = watchRedis(new Redis(url, REDIS_OPTIONS), logger);
      // Its subscriptions wait for Redis, however long an outage lasts at start.
      const sub = subscriptionsQuietly(watchRedis(pub.duplicate({ maxRetriesPerRequest: null }), logger));
      this.redis.push(pub, sub);
      server.adapter(createAdapter(pub, sub, { key: `${this.config.env.PROJECT_CODENAME}:socket.io` }));
    }
    return server;
  }

  override async dispose(): Promise<void> {
    await super.dispose();
    await Promise.all(this.redis.splice(0).map(closeRedis));
  }
}

// The Redis adapter subscribes when a namespace is made and unsubscribes on close without
// waiting for the answers: a close before they are answered (a boot refused by a setting, an
// outage at shutdown) fails them with nobody listening, an unhandled rejection. Once the
// connection is closed there is nothing left to (un)subscribe, so those failures are dropped.
function subscriptionsQuietly(redis: Redis): Redis {
  for (const name of ['subscribe', 'psubscribe', 'unsubscribe', 'punsubscribe'] as const) {
    const command = redis[name].bind(redis) as (...args: unknown[]) => Promise<unknown>;
    (redis as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      const answer = command(...args);
      answer.catch(() => undefined);
      return answer;
    };
  }
  return redis;
}
