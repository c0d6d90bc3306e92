// What the queue and the socket server use of a PGlite session: PGlite itself, or the handle on
// the thread it runs on (embedded-postgres.ts).
export interface ProtocolSession {
  readonly waitReady: Promise<void>;
  isInTransaction(): boolean;
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  execProtocolRawStream(message: Uint8Array, options: { onRawData: (data: Uint8Array) => void }): Promise<void>;
  exec(sql: string): Promise<unknown>;
}

interface Item {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

const SYNC = 0x53; // 'S': ends an extended-protocol exchange (Parse, Bind, Describe, Execute...)
const QUERY = 0x51; // 'Q': a simple query is an exchange by itself
const TERMINATE = 0x58; // 'X'
const PROTOCOL_3 = 196608;
const SYNC_MESSAGE = new Uint8Array([SYNC, 0, 0, 0, 4]);

// The queue behind the embedded server's connections. PGlite is one session, so the messages
// of one connection's exchange must reach it together: pglite-socket's own queue keeps a
// connection's messages together only inside a transaction, so outside one a Parse from one
// connection could meet another's Bind (a query run with someone else's parameters).
// Here a connection keeps the session from its first message until its exchange ends at Sync
// or a simple Query, and for as long as a transaction it opened stays open.
export class ExchangeQueue {
  private readonly queue: Item[] = [];
  private processing = false;
  private owner: number | null = null;

  constructor(private readonly db: ProtocolSession) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.process();
    });
  }

  // Read by the server for its log lines.
  getQueueLength(): number {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId: number): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i].handlerId === handlerId) this.queue.splice(i, 1)[0].reject(new Error('connection closed'));
    }
  }

  // A connection went away mid-exchange: end its exchange (a Sync, whose answer, with any
  // output still held for it, nobody reads: a failed exchange otherwise leaves the session
  // skipping messages until one), undo its open transaction and let the others in.
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    await this.db.execProtocolRawStream(SYNC_MESSAGE, { onRawData: () => undefined });
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
    void this.process();
  }

  private async process(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.queue.length) {
        const index = this.owner === null ? 0 : this.queue.findIndex((i) => i.handlerId === this.owner);
        if (index === -1) return; // the owner's next message has not arrived yet
        const item = this.queue.splice(index, 1)[0];
        try {
          let bytes = 0;
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
          item.resolve(bytes);
        } catch (error) {
          item.reject(error);
        }
        this.owner = endsExchange(item.message) && !this.db.isInTransaction() ? null : item.handlerId;
      }
    } finally {
      this.processing = false;
    }
  }
}

function endsExchange(message: Uint8Array): boolean {
  const type = message[0];
  if (type === SYNC || type === QUERY || type === TERMINATE) return true;
  // The startup message (length, then protocol version 3.0) has no type byte.
  return message.length >= 8 && new DataView(message.buffer, message.byteOffset, message.byteLength).getInt32(4) === PROTOCOL_3;
}
