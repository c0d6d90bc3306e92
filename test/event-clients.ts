import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { io, type Socket } from 'socket.io-client';
import type { TestApp } from './helpers.js';
import { waitFor } from './helpers.js';

// Real clients of the event channel over loopback: socket.io-client and an SSE reader on
// node:http, as a browser's EventSource would read the stream.

export async function listen(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export interface Received {
  event: string;
  data: any;
}

export interface SocketClient {
  socket: Socket;
  received: Received[];
  // The next message named `event` not yet taken.
  next(event: string, timeoutMs?: number): Promise<any>;
  // Every `event` delivery so far.
  events(): any[];
  close(): void;
}

function queueOf(received: Received[]) {
  const taken = new Set<Received>();
  return async (event: string, timeoutMs = 5000) => {
    const item = await waitFor(`"${event}"`, () => received.find((r) => r.event === event && !taken.has(r)), timeoutMs);
    taken.add(item);
    return item.data;
  };
}

export async function connectSocket(base: string, subscription: string, auth: Record<string, unknown> = {}, opts: { headers?: Record<string, string>; query?: Record<string, string> } = {}): Promise<SocketClient> {
  const socket = io(`${base}/events/${subscription}`, { auth, transports: ['websocket'], reconnection: false, forceNew: true, extraHeaders: opts.headers, query: opts.query });
  const received: Received[] = [];
  socket.onAny((event: string, data: unknown) => received.push({ event, data }));
  socket.on('disconnect', (reason) => received.push({ event: 'disconnect', data: reason }));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (error) => reject(error));
  });
  return { socket, received, next: queueOf(received), events: () => received.filter((r) => r.event === 'event').map((r) => r.data), close: () => socket.close() };
}

// The connect_error a refused handshake gets.
export async function refusedSocket(base: string, subscription: string, auth: Record<string, unknown> = {}): Promise<Error & { data?: any }> {
  const socket = io(`${base}/events/${subscription}`, { auth, transports: ['websocket'], reconnection: false, forceNew: true });
  try {
    return await new Promise((resolve, reject) => {
      socket.once('connect', () => reject(new Error('the handshake was accepted')));
      socket.once('connect_error', (error) => resolve(error));
    });
  } finally {
    socket.close();
  }
}

export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  received: Received[];
  // Set when the server ended the stream.
  ended: boolean;
  body: string;
  next(event: string, timeoutMs?: number): Promise<any>;
  events(): any[];
  res: IncomingMessage;
  close(): void;
}

export function openSse(base: string, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const received: Received[] = [];
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        received,
        ended: false,
        body: '',
        res,
        next: queueOf(received),
        events: () => received.filter((r) => r.event === 'event').map((r) => r.data),
        close: () => req.destroy(),
      };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        client.body += chunk;
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (!data.length) continue; // a comment (heartbeat)
          const text = data.join('\n');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // kept as text
          }
          received.push({ event, data: parsed });
        }
      });
      res.on('end', () => (client.ended = true));
      res.on('close', () => (client.ended = true));
      resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}
