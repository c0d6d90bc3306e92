import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ConnectedSocket, MessageBody, SubscribeMessage, WebSocketGateway, type OnGatewayConnection, type OnGatewayDisconnect, type OnGatewayInit } from '@nestjs/websockets';
import type { Namespace, Socket } from 'socket.io';
import type { CallerCredentials } from '../../identity/auth/caller-resolver.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { asChannelFailure, channelError } from './event-errors.js';
import type { EventClient, EventTransport } from './event-hub.js';
import { EventsService } from './events.service.js';
import { BrokerSection } from '../../delivery/broker/broker.settings.js';

// Matched by EventsIoAdapter against the configured subscription names only: Socket.IO creates
// (and keeps) a namespace for every name it matches, before any handshake check.
export const EVENTS_NAMESPACE = /^\/events\/[A-Za-z0-9_-]+$/;
// The handshake, as a pending second factor's message names it.
const HANDSHAKE_ROUTE = { method: 'GET', path: '/events/:name' };
// A slow client's connection is closed this long after its `error`, read or not.
const DROP_GRACE_MS = 2000;

interface SocketData {
  client?: EventClient;
}

// Socket.IO namespace /events/{subscriptionName}: the handshake authenticates (auth `{ token:
// 'Bearer …', tenantCodename }`, or the headers and query an HTTP call would use); then
// `subscribe` / `unsubscribe` with `{ topics }`, answered by `subscribed` / `unsubscribed`, and
// `event` `{ topic, name, data }` per delivery; `error` `{ message, errCode, detail }` for anything
// refused or ended (`message`: the message code, as in HTTP error bodies).
@WebSocketGateway({ namespace: EVENTS_NAMESPACE })
export class EventsGateway implements OnGatewayInit, OnGatewayConnection, OnGatewayDisconnect, EventTransport {
  private readonly logger = new Logger('EventsGateway');
  private readonly bufferLimit: number;
  private readonly storeHeader: string;
  // The parent of the /events/{name} namespaces, once Socket.IO is set up.
  namespace?: Namespace;

  constructor(
    private readonly events: EventsService,
    config: AppConfig,
  ) {
    this.bufferLimit = config.section(BrokerSection).eventChannel.clientBufferLimit;
    this.storeHeader = `${config.env.PROJECT_CODENAME}-store-codename`;
  }

  // Runs for every child namespace before `connection`: a subscription of the other transport
  // or a refused credential is a `connect_error` whose message is the message code and whose
  // data is `{ errCode, detail }` (a name that is no subscription at all never gets here:
  // Socket.IO's `Invalid namespace`).
  afterInit(parent: Namespace): void {
    this.namespace = parent;
    parent.use((socket, next) => {
      this.admit(socket).then(
        () => next(),
        (error: unknown) => {
          const { message, ...data } = channelError(asChannelFailure(error, this.logger, 'event socket handshake failed', 'the connection could not be set up'));
          const refusal = new Error(message) as Error & { data?: unknown };
          refusal.data = data;
          next(refusal);
        },
      );
    });
  }

  handleConnection(socket: Socket): void {
    const client = (socket.data as SocketData).client;
    if (client) this.events.hub.connect(client);
  }

  handleDisconnect(socket: Socket): void {
    const client = (socket.data as SocketData).client;
    if (client) this.events.hub.disconnect(client);
  }

  @SubscribeMessage('subscribe')
  async subscribe(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<void> {
    const client = (socket.data as SocketData).client;
    if (!client) return;
    try {
      const result = await this.events.subscribe(client, topicsOf(body));
      socket.emit('subscribed', result);
    } catch (error) {
      this.refuse(socket, error);
    }
  }

  @SubscribeMessage('unsubscribe')
  unsubscribe(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): void {
    const client = (socket.data as SocketData).client;
    if (!client) return;
    try {
      socket.emit('unsubscribed', this.events.unsubscribe(client, topicsOf(body)));
    } catch (error) {
      this.refuse(socket, error);
    }
  }

  // One encoding per namespace for every client that gets this payload; a client whose
  // outgoing buffer is full is dropped instead of holding the others back.
  deliver(topicName: string, payload: Record<string, unknown>, clients: EventClient[]): void {
    const byNamespace = new Map<Namespace, string[]>();
    for (const client of clients) {
      const socket = (client as SocketClient).socket;
      if (queued(socket) >= this.bufferLimit) {
        client.close(new AppError('EventReaderTooSlow', 'you are reading events too slowly; connect again'));
        continue;
      }
      const ids = byNamespace.get(socket.nsp);
      if (ids) ids.push(socket.id);
      else byNamespace.set(socket.nsp, [socket.id]);
    }
    const packet = { topic: topicName, name: topicName, data: payload };
    // `local`: this replica's sockets only; every replica delivers to its own from the broker.
    for (const [nsp, ids] of byNamespace) nsp.local.to(ids).emit('event', packet);
  }

  private async admit(socket: Socket): Promise<void> {
    this.events.assertOrigin(socket.handshake.headers.origin);
    const name = socket.nsp.name.slice('/events/'.length);
    const subscription = this.events.subscription(name, 'websocket');
    const auth = (socket.handshake.auth ?? {}) as Record<string, unknown>;
    const headers = { ...socket.handshake.headers };
    if (typeof auth.token === 'string' && auth.token) headers.authorization = /^Bearer\s/i.test(auth.token) ? auth.token : `Bearer ${auth.token}`;
    const query = socket.handshake.query as Record<string, unknown>;
    const named = [auth.tenantCodename, headers[this.storeHeader], query._store].find((v) => typeof v === 'string' && v);
    const credentials: CallerCredentials = { headers, query, codename: named as string | undefined, route: HANDSHAKE_ROUTE };
    const { subscriber } = await this.events.authenticate(credentials);
    const client: SocketClient = {
      id: randomUUID(),
      socket,
      subscription,
      transport: this,
      credentials,
      subscriber,
      topics: new Set(),
      close: (error) => {
        this.events.hub.disconnect(client);
        if (!socket.connected) return;
        const slow = queued(socket) >= this.bufferLimit;
        socket.emit('error', channelError(error));
        socket.disconnect(false);
        // A client that does not read would keep its buffer here: its connection goes too.
        if (slow) setTimeout(() => socket.conn.close(), DROP_GRACE_MS).unref();
      },
    };
    (socket.data as SocketData).client = client;
  }

  private refuse(socket: Socket, error: unknown): void {
    socket.emit('error', channelError(asChannelFailure(error, this.logger, 'event socket request failed', 'the request could not be handled')));
  }
}

interface SocketClient extends EventClient {
  socket: Socket;
}

// Packets engine.io holds for this connection until the client has taken the previous ones.
function queued(socket: Socket): number {
  return (socket.conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length;
}

function topicsOf(body: unknown): unknown {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).topics : undefined;
}
