import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { closeRedis } from '../../platform/redis/close-redis.js';
import { Broker, TopicHandlers, type BrokerHandler, type BrokerMessage, type ConsumerHandler } from './broker.js';

export interface RedisStreamsOptions {
  url: string;
  // Stream key = prefix + topic.
  prefix: string;
  // Each stream is trimmed to about this many entries (XADD MAXLEN ~): events are transient.
  maxLen: number;
  // Longest wait of one XREAD; a change of topics interrupts it at once.
  blockMs?: number;
  // Consumer groups: how long a message may stay with a member that does not acknowledge it (its
  // process died) before another member takes it over (XAUTOCLAIM). Default 30 s.
  claimIdleMs?: number;
  onError?: (error: unknown) => void;
}

// A blocking read on its own connection, given up when `stopped` settles first. ioredis never
// settles a command queued while the connection is reconnecting once `disconnect()` is called
// (its close event has fired already): a close during a Redis outage would wait forever.
function untilStopped<T>(read: Promise<T>, stopped: Promise<void>): Promise<T | undefined> {
  read.catch(() => undefined);
  return Promise.race([read, stopped.then(() => undefined)]);
}

function stopSignal(): { stopped: Promise<void>; stop: () => void } {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  return { stopped, stop };
}

type XReadReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

// Redis Streams: XADD with a bounded MAXLEN, and per replica one reader on its own connection
// (XREAD BLOCK blocks the connection) over the streams of the topics its subscribers need, each
// read from where it stood when its first subscriber came (`$` at that moment). Consumer groups
// (`consume`) are Redis consumer groups: XGROUP CREATE … MKSTREAM, XREADGROUP BLOCK, XACK.
export class RedisStreamsBroker extends Broker {
  private readonly handlers = new TopicHandlers();
  private readonly groupConsumers = new Set<GroupConsumer>();
  // Topic → id of the last entry read (or the stream's end when its consumer started).
  private readonly positions = new Map<string, string>();
  private readonly starting = new Map<string, Promise<void>>();
  private readonly commands: Redis;
  private readonly reader: Redis;
  private readerId: number | undefined;
  private generation = 0;
  private readingGeneration = -1;
  private running = true;
  private readonly stopping = stopSignal();
  private wake: (() => void) | undefined;
  private readonly loopDone: Promise<void>;
  private readonly onError: (error: unknown) => void;

  constructor(private readonly options: RedisStreamsOptions) {
    super();
    this.onError = options.onError ?? (() => undefined);
    // The XADDs of one event-loop turn (several requests' completion events) leave in one write.
    this.commands = new Redis(options.url, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
    this.reader = new Redis(options.url, { maxRetriesPerRequest: null, connectionName: 'event-broker-reader' });
    this.reader.on('ready', () => {
      this.readerId = undefined;
    });
    this.commands.on('error', this.onError);
    this.reader.on('error', this.onError);
    this.loopDone = this.loop();
  }

  // Fields: `d` the data (JSON), `t` the time, `i` the id given (without one, the message is
  // named by its stream entry's id: nothing more to write).
  async publish(topic: string, data: Record<string, unknown>, id?: string): Promise<void> {
    const fields: string[] = ['d', JSON.stringify(data), 't', String(Date.now()), ...(id === undefined ? [] : ['i', id])];
    await this.commands.xadd(this.key(topic), 'MAXLEN', '~', String(this.options.maxLen), '*', ...fields);
  }

  async subscribe(topic: string, handler: BrokerHandler): Promise<() => void> {
    if (this.handlers.add(topic, handler)) {
      const starting = this.start(topic);
      this.starting.set(topic, starting);
      await starting.finally(() => this.starting.delete(topic));
    } else {
      await this.starting.get(topic);
    }
    return () => {
      if (this.handlers.remove(topic, handler)) {
        this.positions.delete(topic);
        this.topicsChanged();
      }
    };
  }

  // `$` at this moment, kept as an id so no entry between now and the next read is lost.
  private async start(topic: string): Promise<void> {
    const last = (await this.commands.xrevrange(this.key(topic), '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    if (this.handlers.has(topic) && !this.positions.has(topic)) {
      this.positions.set(topic, last);
      this.topicsChanged();
    }
  }

  async consume(topic: string, group: string, handler: ConsumerHandler): Promise<() => Promise<void>> {
    const consumer = new GroupConsumer(this.commands, {
      url: this.options.url,
      topic,
      key: this.key(topic),
      group,
      handler,
      claimIdleMs: this.options.claimIdleMs ?? 30_000,
      blockMs: this.options.blockMs ?? 5000,
      onError: this.onError,
    });
    try {
      await consumer.start();
    } catch (error) {
      await consumer.stop();
      throw error;
    }
    this.groupConsumers.add(consumer);
    return async () => {
      if (this.groupConsumers.delete(consumer)) await consumer.stop();
    };
  }

  activeTopics(): string[] {
    return [...this.positions.keys()];
  }

  async close(): Promise<void> {
    await Promise.all([...this.groupConsumers].map((c) => c.stop()));
    this.groupConsumers.clear();
    this.running = false;
    this.stopping.stop();
    this.topicsChanged();
    this.reader.disconnect();
    await this.loopDone.catch(() => undefined);
    await closeRedis(this.commands);
  }

  private key(topic: string): string {
    return this.options.prefix + topic;
  }

  // Interrupts the blocked read so the next one covers the new set of streams. The read may not
  // have started yet when the first UNBLOCK arrives (on a loaded machine it can reach Redis well
  // after), so it is repeated until the reader has seen this generation, for as long as a read
  // may block.
  private topicsChanged(): void {
    this.generation++;
    this.wake?.();
    const target = this.generation;
    const until = Date.now() + (this.options.blockMs ?? 5000);
    const kick = async (attempt: number) => {
      if (!this.running && attempt > 0) return;
      if (this.readingGeneration >= target || Date.now() > until) return;
      try {
        // The reader's id is learnt by the reader loop itself: asking now would queue behind the block.
        if (this.readerId !== undefined) await this.commands.client('UNBLOCK', this.readerId);
      } catch (error) {
        if (this.running) this.onError(error);
      }
      setTimeout(() => void kick(attempt + 1), 10).unref();
    };
    void kick(0);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      if (!this.positions.size) {
        this.readingGeneration = this.generation;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          if (!this.running || this.positions.size) resolve();
        });
        this.wake = undefined;
        continue;
      }
      try {
        if (this.readerId === undefined) {
          const id = await untilStopped(this.reader.client('ID'), this.stopping.stopped);
          if (id === undefined) break;
          this.readerId = Number(id);
        }
        // The streams and the generation they stand for are taken together, with no await between.
        this.readingGeneration = this.generation;
        const topics = [...this.positions.keys()];
        if (!topics.length) continue;
        const ids = topics.map((t) => this.positions.get(t)!);
        const reply = (await untilStopped(this.reader.xread('COUNT', 1000, 'BLOCK', this.options.blockMs ?? 5000, 'STREAMS', ...topics.map((t) => this.key(t)), ...ids), this.stopping.stopped)) as XReadReply | undefined;
        if (!this.running) break;
        for (const [key, entries] of reply ?? []) {
          const topic = key.slice(this.options.prefix.length);
          if (!this.positions.has(topic)) continue;
          for (const [id, fields] of entries) {
            this.positions.set(topic, id);
            const message = decode(topic, id, fields);
            if (message) this.handlers.dispatch(message, this.onError);
          }
        }
      } catch (error) {
        if (!this.running) break;
        this.onError(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
}

interface GroupConsumerOptions {
  url: string;
  topic: string;
  key: string;
  group: string;
  handler: ConsumerHandler;
  claimIdleMs: number;
  blockMs: number;
  onError: (error: unknown) => void;
}

type Entry = [id: string, fields: string[] | null];

// One member of a consumer group on one stream: its own connection for the blocking
// XREADGROUP, the shared one for XACK and XAUTOCLAIM. Messages are handled one at a time, in
// order, and acknowledged once handled.
class GroupConsumer {
  // Unique per member: a restarted process is a new member; what the old one held is claimed.
  private readonly name = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly reader: Redis;
  private running = true;
  private readonly stopping = stopSignal();
  private loopDone: Promise<void> = Promise.resolve();
  private nextClaimAt = 0;

  constructor(
    private readonly commands: Redis,
    private readonly o: GroupConsumerOptions,
  ) {
    this.reader = new Redis(o.url, { maxRetriesPerRequest: null, connectionName: 'event-broker-group' });
    this.reader.on('error', (error) => {
      if (this.running) o.onError(error);
    });
  }

  // The group reads from the stream's end when it is created; a group that exists already goes on
  // from where its members stopped.
  async start(): Promise<void> {
    await this.ensureGroup();
    this.loopDone = this.loop();
  }

  // Leaves the group once the messages already taken are handled.
  async stop(): Promise<void> {
    if (!this.running) return this.loopDone;
    this.running = false;
    this.stopping.stop();
    this.reader.disconnect();
    await this.loopDone;
    try {
      // A member holding nothing is forgotten; one still holding messages stays for them to be claimed.
      const pending = (await this.commands.call('XPENDING', this.o.key, this.o.group, '-', '+', '1', this.name)) as unknown[];
      if (!pending.length) await this.commands.call('XGROUP', 'DELCONSUMER', this.o.key, this.o.group, this.name);
    } catch {
      // the broker is closing, or Redis is gone: the member's entry is harmless
    }
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.commands.call('XGROUP', 'CREATE', this.o.key, this.o.group, '$', 'MKSTREAM');
    } catch (error) {
      if (!String((error as Error).message).includes('BUSYGROUP')) throw error;
    }
  }

  private async loop(): Promise<void> {
    // A read never blocks past the next look for abandoned messages.
    const block = Math.max(50, Math.min(this.o.blockMs, Math.floor(this.o.claimIdleMs / 2)));
    while (this.running) {
      try {
        if (Date.now() >= this.nextClaimAt) {
          await this.claimAbandoned();
          this.nextClaimAt = Date.now() + Math.floor(this.o.claimIdleMs / 2);
        }
        const reply = (await untilStopped(
          this.reader.call('XREADGROUP', 'GROUP', this.o.group, this.name, 'COUNT', '20', 'BLOCK', String(block), 'STREAMS', this.o.key, '>'),
          this.stopping.stopped,
        )) as [key: string, entries: Entry[]][] | null | undefined;
        for (const [, entries] of reply ?? []) for (const entry of entries) await this.handle(entry);
      } catch (error) {
        if (!this.running) break;
        if (String((error as Error).message).includes('NOGROUP')) {
          // The stream or the group was deleted: made again, from now on.
          await this.ensureGroup().catch(this.o.onError);
          continue;
        }
        this.o.onError(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  // Messages another member took and left unacknowledged for claimIdleMs: its process died.
  private async claimAbandoned(): Promise<void> {
    let cursor = '0-0';
    do {
      const [next, entries] = (await this.commands.call('XAUTOCLAIM', this.o.key, this.o.group, this.name, String(this.o.claimIdleMs), cursor, 'COUNT', '100')) as [string, (Entry | null)[]];
      for (const entry of entries) if (entry) await this.handle(entry);
      cursor = next;
    } while (cursor !== '0-0' && this.running);
  }

  private async handle([id, fields]: Entry): Promise<void> {
    const message = fields ? decode(this.o.topic, id, fields) : undefined;
    if (message) {
      try {
        await this.o.handler(message);
      } catch (error) {
        this.o.onError(error);
      }
    }
    await this.commands.xack(this.o.key, this.o.group, id);
  }
}

// An entry without `i` (published without an id, or by an earlier release or another producer) is
// named by its stream entry id.
function decode(topic: string, entryId: string, fields: string[]): BrokerMessage | undefined {
  const get = (name: string) => {
    const i = fields.indexOf(name);
    return i < 0 ? undefined : fields[i + 1];
  };
  try {
    const data = JSON.parse(get('d') ?? 'null') as unknown;
    if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
    return { topic, data: data as Record<string, unknown>, publishedAt: Number(get('t')) || Date.now(), id: get('i') ?? entryId };
  } catch {
    return undefined; // an entry someone else wrote in another shape
  }
}
