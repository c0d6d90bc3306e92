import { LRUCache } from 'lru-cache';
import type { AppConfig } from '../config/app-config.js';
import type { RedisKeyInvalidations } from '../redis/key-invalidations.js';
import type { OptionalKeyInvalidations, OptionalRedis } from '../redis/redis.module.js';

// Port: short-lived copies of data whose truth is in the database. In Redis when configured
// (shared by every replica, so a deletion on one is seen by all), with a copy of what was read
// lately kept in process while Redis announces its changes; otherwise a bounded LRU.
export abstract class TtlCache<T> {
  abstract get(key: string): Promise<T | undefined>;
  abstract set(key: string, value: T, ttlMs: number): Promise<void>;
  abstract delete(keys: string[]): Promise<void>;
}

// The answers of in-process lookups, given on the event loop's next turn (its check phase), all
// of one turn's together. As a Redis answer comes on a later turn, under load the requests read
// in one turn then run their first half together, and their second half together once their
// lookups are answered, rather than each running through the whole stack before the next starts
// (the same code stays in the processor's caches). On the authenticated route, answering on the
// next turn at all saved about a fifth of the CPU per request (bench:auth); one `setImmediate`
// for the turn's answers, resolved in one go (their requests' next steps then run in one pass of
// the microtask queue), instead of one per answer, a tenth more (pinned, interleaved runs). The
// cost is one turn of latency.
let answers: (() => void)[] = [];

function answerAll(): void {
  const turn = answers;
  answers = [];
  for (const answer of turn) {
    try {
      answer();
    } catch (error) {
      // The others are still answered; the fault is raised as it would have been.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

function onNextTurn(answer: () => void): void {
  if (answers.length === 0) setImmediate(answerAll);
  answers.push(answer);
}

export class LruTtlCache<T extends object> extends TtlCache<T> {
  private readonly lru: LRUCache<string, T>;

  constructor(max: number) {
    super();
    this.lru = new LRUCache({ max });
  }

  // Answered on the next turn (onNextTurn).
  get(key: string): Promise<T | undefined> {
    return new Promise((resolve) => onNextTurn(() => resolve(this.lru.get(key))));
  }

  async set(key: string, value: T, ttlMs: number) {
    this.lru.set(key, value, { ttl: Math.max(1, Math.floor(ttlMs)) });
  }

  async delete(keys: string[]) {
    for (const key of keys) this.lru.delete(key);
  }
}

export class RedisTtlCache<T> extends TtlCache<T> {
  constructor(
    private readonly redis: NonNullable<OptionalRedis>,
    private readonly prefix: string,
  ) {
    super();
  }

  async get(key: string) {
    return this.parse(await this.redis.get(this.prefix + key));
  }

  // The value and how long Redis keeps it yet (undefined: for ever; 0: gone by the time it was
  // asked), in one round trip (two commands in one write).
  async getWithTtl(key: string): Promise<{ value: T | undefined; ttlMs: number | undefined }> {
    const [raw, ttlMs] = await Promise.all([this.redis.get(this.prefix + key), this.redis.pttl(this.prefix + key)]);
    return { value: this.parse(raw), ttlMs: ttlMs === -1 ? undefined : Math.max(0, ttlMs) };
  }

  private parse(raw: string | null): T | undefined {
    return raw ? (JSON.parse(raw) as T) : undefined;
  }

  async set(key: string, value: T, ttlMs: number) {
    await this.redis.set(this.prefix + key, JSON.stringify(value), 'PX', Math.max(1, Math.floor(ttlMs)));
  }

  async delete(keys: string[]) {
    if (keys.length) await this.redis.del(...keys.map((k) => this.prefix + k));
  }
}

// How long a copy read from Redis is kept in process at most (and never beyond its time in
// Redis). Redis announces every change of it; this bounds what a failure nobody foresaw could
// leave behind.
const NEAR_TTL_MS = 10_000;

// A read from Redis under way. `stale`: a change of its key was announced meanwhile, so what it
// brings may predate the change and is not kept (it is still answered: it was current when read).
interface Flight<T> {
  value: Promise<T | undefined>;
  stale: boolean;
}

// The Redis cache with a copy of what this process read lately, for the keys read on every
// request (a session, an API key's session): such a read then costs no round trip. Redis
// announces every write, deletion and expiry of a key under the prefix, whichever replica made it
// (`RedisKeyInvalidations`), and the copy goes when it is announced; none is kept or served
// while those announcements cannot be heard. A copy is answered on the event loop's next turn,
// after whatever else arrived in the same turn (an announcement included).
export class NearRedisTtlCache<T extends object> extends TtlCache<T> {
  private readonly near: LRUCache<string, T>;
  private readonly flights = new Map<string, Flight<T>>();

  constructor(
    private readonly far: RedisTtlCache<T>,
    private readonly invalidations: Pick<RedisKeyInvalidations, 'listening' | 'subscribe'>,
    prefix: string,
    max: number,
  ) {
    super();
    this.near = new LRUCache({ max, ttl: NEAR_TTL_MS });
    invalidations.subscribe(prefix, { changed: (key) => this.forget(key), reset: () => this.forgetAll() });
  }

  get(key: string): Promise<T | undefined> {
    return new Promise((resolve) =>
      onNextTurn(() => {
        const held = this.invalidations.listening ? this.near.get(key) : undefined;
        resolve(held !== undefined ? held : this.read(key));
      }),
    );
  }

  // Concurrent reads of one key share one round trip.
  private read(key: string): Promise<T | undefined> {
    const current = this.flights.get(key);
    if (current) return current.value;
    const keep = this.invalidations.listening;
    const landed = () => {
      if (this.flights.get(key) === flight) this.flights.delete(key);
    };
    const flight: Flight<T> = {
      value: this.far.getWithTtl(key).then(
        ({ value, ttlMs }) => {
          landed();
          // Kept no longer than Redis keeps it: Redis announces an expiry only when it gets to
          // deleting the key, which may be late.
          if (value !== undefined && ttlMs !== 0 && keep && !flight.stale && this.invalidations.listening) {
            this.near.set(key, value, { ttl: Math.min(NEAR_TTL_MS, ttlMs ?? NEAR_TTL_MS) });
          }
          return value;
        },
        (error: unknown) => {
          landed();
          throw error;
        },
      ),
      stale: false,
    };
    this.flights.set(key, flight);
    return flight.value;
  }

  // Written in Redis only: the copy comes with the next read (this write's own announcement
  // would take it away again).
  async set(key: string, value: T, ttlMs: number) {
    this.forget(key);
    await this.far.set(key, value, ttlMs);
  }

  async delete(keys: string[]) {
    for (const key of keys) this.forget(key);
    await this.far.delete(keys);
  }

  private forget(key: string): void {
    this.near.delete(key);
    const flight = this.flights.get(key);
    if (!flight) return;
    flight.stale = true;
    this.flights.delete(key);
  }

  private forgetAll(): void {
    this.near.clear();
    for (const flight of this.flights.values()) flight.stale = true;
    this.flights.clear();
  }
}

// `namespace` separates caches in one Redis (`session`, `apikey`); `size`: entries kept in process
// (all of them without Redis, the copies of those read lately with it).
export function createTtlCache<T extends object>(config: AppConfig, redis: OptionalRedis, invalidations: OptionalKeyInvalidations, namespace: string, size: number): TtlCache<T> {
  const { PROJECT_CODENAME, SERVICE_CODENAME } = config.env;
  if (!redis) return new LruTtlCache<T>(size);
  const prefix = `${PROJECT_CODENAME}:${SERVICE_CODENAME}:${namespace}:`;
  const far = new RedisTtlCache<T>(redis, prefix);
  return invalidations ? new NearRedisTtlCache<T>(far, invalidations, prefix, size) : far;
}
