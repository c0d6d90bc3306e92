import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { AppConfig } from '../config/app-config.js';
import { loadTemplate, templateDirectory } from './embedded-template.js';
import { ExchangeQueue, type ProtocolSession } from './exchange-queue.js';

// Embedded PostgreSQL: PGlite (Postgres compiled to WASM) served over the wire protocol, so the
// application uses the same `pg` driver and SQL as against a real server. PGlite runs on a
// thread of its own (pglite-thread.mjs): opening the data directory overlaps the loading of the
// application at boot, and its queries never hold the event loop. Nothing of it loads on
// PostgreSQL.
export class EmbeddedPostgres {
  private constructor(
    private readonly session: PGliteThread,
    private readonly server: PGLiteSocketServer,
  ) {}

  // The service's embedded database, when it has no DATABASE_URL.
  static forConfig(config: AppConfig): Promise<EmbeddedPostgres | undefined> {
    return config.embeddedDatabase ? EmbeddedPostgres.start(config.env.DATA_DIR) : Promise.resolve(undefined);
  }

  // `dataDir` ':memory:' keeps everything in memory (tests); otherwise a folder on disk.
  // `template`: what a first boot starts from. 'built' is the build's (see embedded-template.ts):
  // its folder, copied, for a new data directory on disk; its archive otherwise, read only for a
  // first boot (a later one does not hold its ~5 MB). Or an archive of one's own, or none (initdb).
  static async start(dataDir: string, template: Blob | undefined | 'built' = 'built'): Promise<EmbeddedPostgres> {
    let dir: string | undefined;
    let first = true;
    if (dataDir !== ':memory:') {
      dir = resolve(dataDir, 'pglite');
      mkdirSync(dirname(dir), { recursive: true }); // PGlite does not create parent folders
      first = !existsSync(join(dir, 'PG_VERSION'));
    }
    const copyFrom = first && template === 'built' && dir && !existsSync(dir) ? templateDirectory() : undefined;
    const blob = !first || copyFrom ? undefined : template === 'built' ? loadTemplate() : template;
    const session = await PGliteThread.start(dir, blob && new Uint8Array(await blob.arrayBuffer()), copyFrom);
    try {
      return new EmbeddedPostgres(session, await serveOverSocket(session));
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  get url(): string {
    return `postgres://postgres@${this.server.getServerConn()}/postgres`;
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.session.close();
  }
}

// Extended-protocol messages whose answers a client reads only after a Sync or Flush: Parse,
// Bind, Describe, Execute, Close.
const BUFFERED = new Set([0x50, 0x42, 0x44, 0x45, 0x43]);

interface Reply {
  id: number;
  chunks?: Uint8Array[];
  inTransaction?: boolean;
  error?: { message: string; stack?: string };
}

// The main thread's handle on PGlite's thread: the part of PGlite's API the socket server and
// the exchange queue use. One request is in flight at a time (the queue sees to it).
class PGliteThread implements ProtocolSession {
  readonly waitReady = Promise.resolve();
  private inTransaction = false;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: Reply) => {
      const call = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error) call?.reject(Object.assign(new Error(reply.error.message), { stack: reply.error.stack }));
      else call?.resolve(reply);
    });
    // The thread died (a WASM abort, out of memory): every call from now on fails.
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const call of this.pending.values()) call.reject(this.failure);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the embedded database's thread exited (${code})`)));
  }

  static start(dataDir: string | undefined, template: Uint8Array | undefined, copyFrom: string | undefined): Promise<PGliteThread> {
    const worker = new Worker(new URL('./pglite-thread.mjs', import.meta.url), {
      workerData: { dataDir, template, copyFrom },
      transferList: template ? [template.buffer as ArrayBuffer] : [],
    });
    return new Promise((resolve, reject) => {
      const refused = (error: Error) => reject(error);
      const exited = (code: number) => reject(new Error(`the embedded database's thread exited (${code}) before it started`));
      worker.once('error', refused).once('exit', exited);
      worker.once('message', (message: { ready?: true; error?: string }) => {
        worker.off('error', refused).off('exit', exited);
        if (message.ready) resolve(new PGliteThread(worker));
        else reject(new Error(`the embedded database did not start: ${message.error}`));
      });
    });
  }

  isInTransaction(): boolean {
    return this.inTransaction;
  }

  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async execProtocolRawStream(message: Uint8Array, { onRawData }: { onRawData: (data: Uint8Array) => void }): Promise<void> {
    // Copied, not transferred: the queue reads the message again once it is answered.
    if (BUFFERED.has(message[0])) {
      // A server answers these at the exchange's Sync (or Flush): one round trip per exchange
      // instead of one per message. Their output comes with that answer, to the same connection
      // (the queue keeps the session to it until the exchange ends; see ExchangeQueue).
      if (this.failure) throw this.failure;
      this.worker.postMessage({ op: 'protocol', message });
      return;
    }
    const reply = await this.call({ op: 'protocol', message });
    for (const chunk of reply.chunks ?? []) onRawData(chunk);
  }

  async exec(sql: string): Promise<void> {
    await this.call({ op: 'exec', sql });
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call({ op: 'close' }).catch(() => undefined);
    await this.worker.terminate();
  }

  private call(request: { op: string; message?: Uint8Array; sql?: string }): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = ++this.nextId;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...request });
    }).then((reply) => {
      if (reply.inTransaction !== undefined) this.inTransaction = reply.inTransaction;
      return reply;
    });
  }
}

// The socket server with our exchange-keeping queue in place of its own (see ExchangeQueue).
// The server hands `queryQueue` to each connection's handler, so it is replaced before start.
async function serveOverSocket(db: ProtocolSession, maxConnections = 64): Promise<PGLiteSocketServer> {
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const server = new PGLiteSocketServer({ db: db as never, host: '127.0.0.1', port: 0, maxConnections });
  (server as unknown as { queryQueue: ExchangeQueue }).queryQueue = new ExchangeQueue(db);
  await server.start();
  return server;
}
