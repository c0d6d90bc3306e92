import { Redis } from 'ioredis';
import { Broker, TopicHandlers, type BrokerHandler, type BrokerMessage } from './broker.js';

export interface RedisStreamsOptions {
  url: string;
  // Stream key = prefix + topic.
  prefix: string;
  // Each stream is trimmed to about this many entries (XADD MAXLEN ~): events are transient.
  maxLen: number;
  // Longest wait of one XREAD; a change of topics interrupts it at once.
  blockMs?: number;
  onError?: (error: unknown) => void;
}

type XReadReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

// Redis Streams: XADD with a bounded MAXLEN, and per replica one reader on its own connection
// (XREAD BLOCK blocks the connection) over the streams of the topics its subscribers need, each
// read from where it stood when its first subscriber came (`$` at that moment).
export class RedisStreamsBroker extends Broker {
  private readonly handlers = new TopicHandlers();
  // Topic → id of the last entry read (or the stream's end when its consumer started).
  private readonly positions = new Map<string, string>();
  private readonly starting = new Map<string, Promise<void>>();
  private readonly commands: Redis;
  private readonly reader: Redis;
  private readerId: number | undefined;
  private generation = 0;
  private readingGeneration = -1;
  private running = true;
  private wake: (() => void) | undefined;
  private readonly loopDone: Promise<void>;
  private readonly onError: (error: unknown) => void;

  constructor(private readonly options: RedisStreamsOptions) {
    super();
    this.onError = options.onError ?? (() => undefined);
    this.commands = new Redis(options.url, { maxRetriesPerRequest: 2 });
    this.reader = new Redis(options.url, { maxRetriesPerRequest: null, connectionName: 'event-broker-reader' });
    this.reader.on('ready', () => {
      this.readerId = undefined;
    });
    this.commands.on('error', this.onError);
    this.reader.on('error', this.onError);
    this.loopDone = this.loop();
  }

  async publish(topic: string, data: Record<string, unknown>): Promise<void> {
    await this.commands.xadd(this.key(topic), 'MAXLEN', '~', String(this.options.maxLen), '*', 'd', JSON.stringify(data), 't', String(Date.now()));
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

  activeTopics(): string[] {
    return [...this.positions.keys()];
  }

  async close(): Promise<void> {
    this.running = false;
    this.topicsChanged();
    this.reader.disconnect();
    await this.loopDone.catch(() => undefined);
    await this.commands.quit().catch(() => this.commands.disconnect());
  }

  private key(topic: string): string {
    return this.options.prefix + topic;
  }

  // Interrupts the blocked read so the next one covers the new set of streams. The read may not
  // have started yet when the first UNBLOCK arrives, so it is repeated until the reader has seen
  // this generation.
  private topicsChanged(): void {
    this.generation++;
    this.wake?.();
    const target = this.generation;
    const kick = async (attempt: number) => {
      if (!this.running && attempt > 0) return;
      if (this.readingGeneration >= target || attempt > 50) return;
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
        this.readerId ??= Number(await this.reader.client('ID'));
        // The streams and the generation they stand for are taken together, with no await between.
        this.readingGeneration = this.generation;
        const topics = [...this.positions.keys()];
        if (!topics.length) continue;
        const ids = topics.map((t) => this.positions.get(t)!);
        const reply = (await this.reader.xread('COUNT', 1000, 'BLOCK', this.options.blockMs ?? 5000, 'STREAMS', ...topics.map((t) => this.key(t)), ...ids)) as XReadReply;
        for (const [key, entries] of reply ?? []) {
          const topic = key.slice(this.options.prefix.length);
          if (!this.positions.has(topic)) continue;
          for (const [id, fields] of entries) {
            this.positions.set(topic, id);
            const message = decode(topic, fields);
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

function decode(topic: string, fields: string[]): BrokerMessage | undefined {
  const get = (name: string) => fields[fields.indexOf(name) + 1];
  try {
    const data = JSON.parse(get('d') ?? 'null') as unknown;
    if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
    return { topic, data: data as Record<string, unknown>, publishedAt: Number(get('t')) || Date.now() };
  } catch {
    return undefined; // an entry someone else wrote in another shape
  }
}
