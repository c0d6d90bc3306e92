import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from '@jest/globals';
import { ProviderError } from '../src/delivery/notification/providers/provider.js';

// Stands in for a provider's HTTP API on 127.0.0.1: records each request (parsed as the
// provider sends it) and answers with the first matching rule, else `answer`.

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  text: string;
}

export interface Answer {
  status: number;
  body: unknown;
  contentType?: string;
}

export class FakeApi<R extends Received = Received> {
  readonly requests: R[] = [];
  readonly rules: { match: (r: R) => boolean; answer: (r: R) => Answer }[] = [];
  url = '';
  private server!: Server;

  constructor(
    public answer: (r: R) => Answer,
    private readonly parse: (r: Received) => R = (r) => r as R,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const recorded = this.parse({ method: req.method!, url: req.url!, headers: req.headers, text: Buffer.concat(chunks).toString('utf8') });
        this.requests.push(recorded);
        const a = (this.rules.find((rule) => rule.match(recorded))?.answer ?? this.answer)(recorded);
        res.writeHead(a.status, { 'Content-Type': a.contentType ?? 'application/json; charset=utf-8' });
        res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// The ProviderError a send must fail with.
export async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}
