import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { loadTemplate } from './embedded-template.js';
import { ExchangeQueue } from './exchange-queue.js';

// Embedded PostgreSQL: PGlite (Postgres compiled to WASM) served in-process over the wire
// protocol, so the application uses the same `pg` driver and SQL as against a real server.
// PGlite is imported only here, when it starts: a service on PostgreSQL never loads it.
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
  ) {}

  // `dataDir` ':memory:' keeps everything in memory (tests); otherwise a folder on disk.
  // `template`: the data directory a first boot starts from (the build's, see embedded-template.ts),
  // or how to read it: read only for a first boot (a later one does not hold its ~5 MB).
  static async start(dataDir: string, template: Blob | undefined | (() => Blob | undefined) = loadTemplate): Promise<EmbeddedPostgres> {
    const { PGlite } = await import('@electric-sql/pglite');
    const initial = () => (typeof template === 'function' ? template() : template);
    let db: PGlite;
    if (dataDir === ':memory:') {
      db = await PGlite.create({ loadDataDir: initial() });
    } else {
      const dir = resolve(dataDir, 'pglite');
      mkdirSync(dirname(dir), { recursive: true }); // PGlite does not create parent folders
      // A first boot starts from the build's template (see embedded-template.ts).
      const first = !existsSync(join(dir, 'PG_VERSION'));
      db = await PGlite.create(dir, { loadDataDir: first ? initial() : undefined });
    }
    return new EmbeddedPostgres(db, await serveOverSocket(db));
  }

  get url(): string {
    return `postgres://postgres@${this.server.getServerConn()}/postgres`;
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
  }
}

// The socket server with our exchange-keeping queue in place of its own (see ExchangeQueue).
// The server hands `queryQueue` to each connection's handler, so it is replaced before start.
export async function serveOverSocket(db: PGlite, maxConnections = 64): Promise<PGLiteSocketServer> {
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  (server as unknown as { queryQueue: ExchangeQueue }).queryQueue = new ExchangeQueue(db);
  await server.start();
  return server;
}
