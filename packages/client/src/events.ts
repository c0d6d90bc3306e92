import { createParser } from 'eventsource-parser';
import type { Socket } from 'socket.io-client';
import { ServiceError, type ErrCode } from './errors.js';
import type { TopicPayloads } from './generated/events.js';

// A topic's payload: typed for the service's own topics (from its AsyncAPI document), `unknown`
// for the topics a deployment adds.
export type PayloadOf<T extends string> = T extends keyof TopicPayloads ? TopicPayloads[T] : unknown;

export interface EventPacket<T extends string = string> {
  topic: T;
  name: string;
  data: PayloadOf<T>;
}

export interface ChannelError {
  message: string;
  errCode: ErrCode | 'NetworkError' | 'InvalidNamespace';
  detail?: string;
}

export type SubscriptionStatus = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface SubscribeOptions<T extends string> {
  topics: readonly T[];
  onEvent: (event: EventPacket<T>) => void;
  // Topics the service accepted and refused (not allowed to this caller) at each (re)connection.
  onSubscribed?: (answer: { topics: string[]; rejected: string[] }) => void;
  onError?: (error: ChannelError) => void;
  onStatus?: (status: SubscriptionStatus) => void;
  // The subscription's transport, as the service's `eventSubscriptions` setting declares it:
  // Socket.IO over WebSocket only (no sticky sessions needed), or Server-Sent Events.
  transport?: 'websocket' | 'sse';
}

export interface Subscription {
  close(): void;
}

interface ChannelOptions {
  baseUrl: string;
  store: string;
  storeHeader: string;
  fetch: typeof fetch;
  cookies: boolean;
  token: () => Promise<string | undefined>;
}

// Reconnection waits: 1 s doubling to 30 s, each with up to a half of it added at random.
const backoff = (attempt: number) => {
  const base = Math.min(30_000, 1000 * 2 ** attempt);
  return base + Math.random() * base * 0.5;
};

// The service's event channel: `subscribe(subscriptionName, { topics, onEvent })`. Each
// (re)connection presents the session's current token (refreshed first when due).
export class EventChannel {
  constructor(private readonly options: ChannelOptions) {}

  subscribe<T extends string>(subscription: string, options: SubscribeOptions<T>): Subscription {
    return options.transport === 'sse' ? this.stream(subscription, options) : this.socket(subscription, options);
  }

  // Socket.IO's client is loaded with the first socket subscription: apps that use none (or SSE
  // only) do not carry it.
  private socket<T extends string>(subscription: string, options: SubscribeOptions<T>): Subscription {
    let closed = false;
    let socket: Socket | undefined;
    void import('socket.io-client')
      .then(({ io }) => {
        if (!closed) socket = this.connect(io, subscription, options);
      })
      .catch((error: unknown) => options.onError?.({ message: String((error as Error).message ?? error), errCode: 'NetworkError' }));
    return {
      close: () => {
        closed = true;
        socket?.disconnect();
        options.onStatus?.('closed');
      },
    };
  }

  private connect<T extends string>(io: typeof import('socket.io-client').io, subscription: string, options: SubscribeOptions<T>): Socket {
    const { baseUrl, store } = this.options;
    const status = (s: SubscriptionStatus) => options.onStatus?.(s);
    let renewed = false;
    const socket: Socket = io(`${baseUrl}/events/${encodeURIComponent(subscription)}`, {
      transports: ['websocket'],
      reconnectionDelay: 1000,
      reconnectionDelayMax: 30_000,
      randomizationFactor: 0.5,
      auth: (cb) => {
        this.options
          .token()
          .then((token) => cb({ ...(token && { token: `Bearer ${token}` }), ...(store && { tenantCodename: store }) }))
          .catch(() => cb({ ...(store && { tenantCodename: store }) }));
      },
    });
    status('connecting');
    socket.on('connect', () => {
      renewed = false;
      status('open');
      socket.emit('subscribe', { topics: options.topics });
    });
    socket.on('subscribed', (answer: { topics: string[]; rejected: string[] }) => options.onSubscribed?.(answer));
    socket.on('event', (packet: EventPacket<T>) => options.onEvent(packet));
    socket.on('error', (error: { message: string; errCode: ErrCode; detail?: string }) => options.onError?.(error));
    socket.on('disconnect', (reason) => {
      // The service ended the connection (the session ended, the store was deactivated): it says
      // why in an `error` first; the client does not come back on its own.
      status(reason === 'io server disconnect' || reason === 'io client disconnect' ? 'closed' : 'reconnecting');
    });
    socket.on('connect_error', (err: Error & { data?: { errCode?: ErrCode; detail?: string } }) => {
      if (err.message === 'Invalid namespace') {
        options.onError?.({ message: err.message, errCode: 'InvalidNamespace', detail: `no subscription ${subscription}` });
        status('closed');
        return;
      }
      if (!err.data?.errCode) return; // a network failure: Socket.IO reconnects with its backoff
      // Refused by the service. An expired token is renewed (the auth callback asks for a fresh
      // one) and the connection tried once more; anything else is the answer.
      if (err.data.errCode === 'Unauthorized' && !renewed) {
        renewed = true;
        setTimeout(() => socket.connect(), backoff(0));
        return;
      }
      options.onError?.({ message: err.message, errCode: err.data.errCode, ...(err.data.detail && { detail: err.data.detail }) });
      status('closed');
    });
    return socket;
  }

  // Server-Sent Events read through fetch (no EventSource needed, so headers carry the token).
  private stream<T extends string>(subscription: string, options: SubscribeOptions<T>): Subscription {
    const abort = new AbortController();
    const status = (s: SubscriptionStatus) => options.onStatus?.(s);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      abort.abort();
      status('closed');
    };

    const run = async () => {
      let attempt = 0;
      let renewed = false;
      status('connecting');
      while (!closed) {
        const url = `${this.options.baseUrl}/events/${encodeURIComponent(subscription)}/stream?topics=${encodeURIComponent(options.topics.join(','))}`;
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        if (this.options.store) headers[this.options.storeHeader] = this.options.store;
        try {
          const token = await this.options.token();
          if (token) headers.authorization = `Bearer ${token}`;
          const res = await this.options.fetch(url, { headers, signal: abort.signal, ...(this.options.cookies && { credentials: 'include' as const }) });
          if (!res.ok || !res.body) {
            const body = await res.json().catch(() => undefined);
            const error = ServiceError.fromAnswer(res.status, body);
            if (res.status === 401 && !renewed) {
              renewed = true;
              continue;
            }
            if (res.status >= 400 && res.status < 500) {
              options.onError?.({ message: error.message, errCode: error.errCode as ErrCode, ...(error.detail && { detail: error.detail }) });
              close();
              return;
            }
            throw error;
          }
          attempt = 0;
          renewed = false;
          status('open');
          let ended: ChannelError | undefined;
          const parser = createParser({
            onEvent: (message) => {
              const data = message.data ? (JSON.parse(message.data) as unknown) : undefined;
              if (message.event === 'event') options.onEvent(data as EventPacket<T>);
              else if (message.event === 'subscribed') options.onSubscribed?.(data as { topics: string[]; rejected: string[] });
              else if (message.event === 'error') {
                ended = data as ChannelError;
                options.onError?.(ended);
              }
            },
          });
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            parser.feed(value);
          }
          // The service closed the stream after an `error` (the session ended): not reopened.
          if (ended) {
            close();
            return;
          }
        } catch (error) {
          if (closed) return;
          if (error instanceof ServiceError && error.status >= 400 && error.status < 500) throw error;
        }
        if (closed) return;
        status('reconnecting');
        await new Promise((resolve) => setTimeout(resolve, backoff(attempt++)));
      }
    };
    void run().catch((error: unknown) => {
      options.onError?.({ message: String((error as Error).message ?? error), errCode: 'NetworkError' });
      close();
    });
    return { close };
  }
}
