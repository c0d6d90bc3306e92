import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

// A backend team's endpoint on loopback: records every request; `answer` says what it replies
// (a status, or `null`: never answer).
export class WebhookReceiver {
  readonly received: Received[] = [];
  answer: (path: string) => number | null = () => 200;
  private readonly server: Server;
  private readonly hanging = new Set<() => void>();

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const status = this.answer(req.url ?? '/');
        if (status === null) {
          this.hanging.add(() => res.destroy());
          return;
        }
        res.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`);
      });
    });
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  to(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const end of this.hanging) end();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
