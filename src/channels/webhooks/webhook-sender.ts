import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { guardedLookup, refusedAddress, RefusedAddressError } from '../../platform/net/outbound-address.js';

// What is read of an answer, and what of it is kept.
const READ_LIMIT = 64 * 1024;
const KEPT = 1024;

export interface SendInput {
  url: string;
  // The Standard Webhooks message: `webhook-id`, the body, the time it is signed at.
  id: string;
  body: string;
  timestamp: Date;
  // Every secret that signs (`whsec_...`): the current one, and the previous one during an overlap.
  secrets: readonly string[];
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export interface SendResult {
  // The answer's status, or null when none came (refused, timeout, connection error).
  status: number | null;
  // The first kilobyte of the answer.
  body: string | null;
  // Why no answer came.
  error: string | null;
  durationMs: number;
}

// `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret, space-separated.
export function signatures(secrets: readonly string[], id: string, timestamp: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(' ');
}

// Connections are kept for the next delivery to the same host (at most 8 at once per host: a
// slow host waits for its own). `close` ends them.
export class WebhookSender {
  private readonly http = new HttpAgent({ keepAlive: true, maxSockets: 8, timeout: 60_000 });
  private readonly https = new HttpsAgent({ keepAlive: true, maxSockets: 8, timeout: 60_000 });

  send(input: SendInput): Promise<SendResult> {
    return sendWebhook(input, { http: this.http, https: this.https });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

// One attempt: POST with the Standard Webhooks headers. Redirects are not followed (a 3xx is an
// answer like any other, and not a success); at most 64 KB of the answer is read. The address is
// checked at connection time, after resolution (guardedLookup), so a name that now resolves to a
// refused address is refused; an IP written in the URL is checked before.
// A kept-alive connection the endpoint closed as it was reused fails at once (ECONNRESET, EPIPE)
// without the request having been read: such an attempt is made again, once, on a new connection.
async function sendWebhook(input: SendInput, agents: { http: HttpAgent; https: HttpsAgent }): Promise<SendResult> {
  const first = await sendOnce(input, agents);
  return first.staleConnection ? sendOnce(input, agents) : first;
}

function sendOnce(input: SendInput, agents: { http: HttpAgent; https: HttpsAgent }): Promise<SendResult & { staleConnection?: boolean }> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      return resolve({ status: null, body: null, error: 'not a URL', durationMs: 0 });
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!input.allowPrivateNetworks && isIP(host)) {
      const why = refusedAddress(host);
      if (why) return resolve({ status: null, body: null, error: `refused: ${host} is ${why}`, durationMs: 0 });
    }
    const unixSeconds = Math.floor(input.timestamp.getTime() / 1000);
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(input.body),
      'user-agent': 'svc-webhooks/1',
      'webhook-id': input.id,
      'webhook-timestamp': String(unixSeconds),
      'webhook-signature': signatures(input.secrets, input.id, new Date(unixSeconds * 1000), input.body),
    };
    let settled = false;
    const done = (result: Omit<SendResult, 'durationMs'> & { staleConnection?: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    const req = send(url, { method: 'POST', headers, agent: https ? agents.https : agents.http, ...(input.allowPrivateNetworks ? {} : { lookup: guardedLookup() }) }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size >= READ_LIMIT) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size >= READ_LIMIT) res.destroy();
      });
      const finish = () => done({ status: res.statusCode ?? null, body: Buffer.concat(chunks).subarray(0, KEPT).toString('utf8'), error: null });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ status: null, body: null, error: `no answer within ${input.timeoutMs} ms` });
    }, input.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) return done({ status: null, body: null, error: err.code, staleConnection: true });
      const error = err instanceof RefusedAddressError ? `refused: ${err.message}` : `${err.code ?? err.name}: ${err.message}`.slice(0, 300);
      done({ status: null, body: null, error });
    });
    req.end(input.body);
  });
}
