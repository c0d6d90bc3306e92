import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '../../platform/config/app-config.js';
import { PasswordPolicySection } from './password-policy.settings.js';

// One prefix is asked at most once a minute per replica.
const RANGE_TTL_MS = 60_000;
// Range answers are ~30 KB with padding (~1,000 lines); what is kept is the non-padding lines.
const CACHED_PREFIXES = 2_000;
// A real answer is under 40 KB (padding included): anything over this is not the range API's,
// and is neither buffered nor read to its end.
const MAX_ANSWER_BYTES = 256 * 1024;

// Counts per SHA-1 suffix (35 upper-case hex characters) of one prefix; padding lines are left out.
type Range = Map<string, number>;

// How often a password appears in known breaches, by the k-anonymity range API: only the first
// 5 hex characters of its SHA-1 leave the service (with `Add-Padding: true`, so the answer's size
// does not tell the prefix either), and the suffix is compared here. `undefined`: the range
// service did not answer within `timeoutMs`, answered an error, or more than a range answer
// (the policy decides what that means).
@Injectable()
export class BreachedPasswords {
  private readonly ranges = new LRUCache<string, Range>({ max: CACHED_PREFIXES, ttl: RANGE_TTL_MS });
  // Concurrent lookups of one prefix share one request.
  private readonly inFlight = new Map<string, Promise<Range | undefined>>();

  constructor(
    private readonly config: AppConfig,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext(BreachedPasswords.name);
  }

  async count(password: string): Promise<number | undefined> {
    const sha1 = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
    const prefix = sha1.slice(0, 5);
    const range = await this.range(prefix);
    return range && (range.get(sha1.slice(5)) ?? 0);
  }

  private range(prefix: string): Promise<Range | undefined> {
    const cached = this.ranges.get(prefix);
    if (cached) return Promise.resolve(cached);
    let pending = this.inFlight.get(prefix);
    if (!pending) {
      pending = this.fetchRange(prefix).finally(() => this.inFlight.delete(prefix));
      this.inFlight.set(prefix, pending);
    }
    return pending;
  }

  // A failure is not cached: the next new password asks again.
  private async fetchRange(prefix: string): Promise<Range | undefined> {
    const { rangeUrl, timeoutMs } = this.config.section(PasswordPolicySection).passwordPolicy.breachedCheck;
    // Ends the request, its connection included: the timeout, or an answer over the cap.
    const cutOff = new AbortController();
    try {
      const response = await fetch(rangeUrl + prefix, {
        headers: { 'Add-Padding': 'true', accept: 'text/plain' },
        redirect: 'error',
        signal: AbortSignal.any([cutOff.signal, AbortSignal.timeout(timeoutMs)]),
      });
      if (!response.ok) throw new Error(`answered ${response.status}`);
      const range = parseRange(await readCapped(response, MAX_ANSWER_BYTES));
      this.ranges.set(prefix, range);
      return range;
    } catch (error) {
      // Whatever is left unread is dropped with its connection, not drained.
      cutOff.abort();
      // The prefix is logged, never the password or its whole hash.
      this.logger.warn({ prefix, reason: (error as Error).message }, 'breached-password range service unavailable');
      return undefined;
    }
  }
}

// The body as text, counted as it arrives: refused unread when its Content-Length is over
// `maxBytes`, and cut off once that many bytes (decompressed) have come.
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw new Error(`announced ${declared} bytes, more than a range answer`);
  const chunks: Uint8Array[] = [];
  let received = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      received += chunk.byteLength;
      if (received > maxBytes) throw new Error(`sent more than ${maxBytes} bytes, more than a range answer`);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

// `SUFFIX:COUNT` lines; padding lines have count 0.
export function parseRange(text: string): Range {
  const range: Range = new Map();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon !== 35) continue;
    const count = Number.parseInt(line.slice(colon + 1), 10);
    if (count > 0) range.set(line.slice(0, 35).toUpperCase(), count);
  }
  return range;
}
