import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import nacl from 'tweetnacl';
import { WebSocketServer, type WebSocket } from 'ws';
import { FakeApi, type Received } from './fake-api.js';

// A stand-in for a Pusher-compatible provider on 127.0.0.1: its REST API, which checks the
// request signing the provider documents (HMAC-SHA256 over method, path and the sorted query,
// with body_md5 of the body), and a minimal Pusher-protocol WebSocket server.

export const APP = { appId: '4242', key: 'app-key', secret: 'app-secret-0123456789' };

export interface PusherRequest extends Received {
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown> | undefined;
  // Whether the signature, key, timestamp and body digest all checked out.
  signed: boolean;
}

export function sign(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

// The provider's check of a signed request.
export function verifySigned(method: string, url: string, text: string, app = APP): boolean {
  const parsed = new URL(url, 'http://x');
  const query = Object.fromEntries(parsed.searchParams);
  const { auth_signature: signature, ...rest } = query;
  if (!signature || rest.auth_key !== app.key || rest.auth_version !== '1.0') return false;
  if (Math.abs(Date.now() / 1000 - Number(rest.auth_timestamp)) > 600) return false;
  if (text && rest.body_md5 !== createHash('md5').update(text).digest('hex')) return false;
  const ordered = Object.keys(rest)
    .sort()
    .map((k) => `${k}=${rest[k]}`)
    .join('&');
  const expected = Buffer.from(sign(app.secret, [method, parsed.pathname, ordered].join('\n')));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function parse(r: Received): PusherRequest {
  const parsed = new URL(r.url, 'http://x');
  let body: Record<string, unknown> | undefined;
  try {
    body = r.text ? JSON.parse(r.text) : undefined;
  } catch {
    body = undefined;
  }
  return { ...r, path: parsed.pathname, query: Object.fromEntries(parsed.searchParams), body, signed: verifySigned(r.method, r.url, r.text) };
}

// Answers like the provider: 401 for a bad signature, `{}` otherwise (rules may say more).
export function fakePusherApi(): FakeApi<PusherRequest> {
  return new FakeApi<PusherRequest>((r) => (r.signed ? { status: 200, body: {} } : { status: 401, body: 'Invalid signature', contentType: 'text/plain' }), parse);
}

// What the provider does for end-to-end encrypted channels: the channel's key is
// sha256(channel name + master key); the payload is a nacl secretbox.
export function decrypt(channel: string, masterKeyBase64: string, wire: string): unknown {
  const { nonce, ciphertext } = JSON.parse(wire) as { nonce: string; ciphertext: string };
  const key = createHash('sha256').update(Buffer.concat([Buffer.from(channel), Buffer.from(masterKeyBase64, 'base64')])).digest();
  const opened = nacl.secretbox.open(Buffer.from(ciphertext, 'base64'), Buffer.from(nonce, 'base64'), key);
  if (!opened) throw new Error('does not decrypt');
  return JSON.parse(Buffer.from(opened).toString('utf8'));
}

// A webhook as the provider sends it.
export function webhook(body: unknown, app: { key: string; secret: string } = APP): { headers: Record<string, string>; text: string } {
  const text = JSON.stringify(body);
  return { text, headers: { 'content-type': 'application/json', 'x-pusher-key': app.key, 'x-pusher-signature': sign(app.secret, text) } };
}

export interface Subscription {
  channel: string;
  ok: boolean;
}

// Enough of the Pusher WebSocket protocol for pusher-js to connect and subscribe: it hands out
// a socket id and checks each private/presence subscription's `auth` against the app secret.
export class FakePusherSocketServer {
  readonly subscriptions: Subscription[] = [];
  readonly signins: { userData: unknown; ok: boolean }[] = [];
  port = 0;
  private server!: WebSocketServer;
  private next = 1;

  async start(): Promise<void> {
    this.server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => this.server.once('listening', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.server.on('connection', (socket, req) => {
      if (!req.url?.startsWith(`/app/${APP.key}`)) return socket.close(4001, 'unknown app');
      const socketId = `${1000 + this.next++}.${Math.floor(Math.random() * 1e6)}`;
      send(socket, 'pusher:connection_established', JSON.stringify({ socket_id: socketId, activity_timeout: 120 }));
      socket.on('message', (raw) => this.receive(socket, socketId, String(raw)));
    });
  }

  private receive(socket: WebSocket, socketId: string, raw: string): void {
    const message = JSON.parse(raw) as { event: string; data: { channel?: string; auth?: string; channel_data?: string; user_data?: string } };
    if (message.event === 'pusher:ping') return send(socket, 'pusher:pong', {});
    if (message.event === 'pusher:signin') {
      const { auth = '', user_data: userData = '' } = message.data;
      const ok = auth === `${APP.key}:${sign(APP.secret, `${socketId}::user::${userData}`)}`;
      this.signins.push({ userData: JSON.parse(userData || 'null'), ok });
      return ok ? send(socket, 'pusher:signin_success', { user_data: userData }) : send(socket, 'pusher:error', { message: 'invalid signin', code: 4009 });
    }
    if (message.event !== 'pusher:subscribe') return;
    const { channel = '', auth = '', channel_data: channelData } = message.data;
    const signed = [socketId, channel, ...(channelData ? [channelData] : [])].join(':');
    const ok = !/^(private|presence)-/.test(channel) || auth === `${APP.key}:${sign(APP.secret, signed)}`;
    this.subscriptions.push({ channel, ok });
    if (ok) send(socket, 'pusher_internal:subscription_succeeded', '{}', channel);
    else send(socket, 'pusher:error', { message: `invalid signature for ${channel}`, code: 4009 });
  }

  stop(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function send(socket: WebSocket, event: string, data: unknown, channel?: string): void {
  socket.send(JSON.stringify({ event, data, ...(channel && { channel }) }));
}
