import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';

export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
}

interface QueryConfig {
  name: string;
  text: string;
  values: unknown[];
}

interface PgClient {
  query(config: QueryConfig): Promise<{ rows: unknown[] }>;
  release(error?: Error | boolean): void;
}

interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  query(config: QueryConfig): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgClient>;
  on(event: 'remove', listener: (client: PgClient) => void): void;
}

// The pg pool behind TypeORM (PostgreSQL and the embedded database alike): its counts for the
// metrics, and named statements for the statements of the hottest routes.
@Injectable()
export class DatabasePool {
  private readonly logger = new Logger('DatabasePool');
  // Whether one session serves every connection: PGlite does (the embedded database, or a PGlite
  // server a test run shares), PostgreSQL gives each connection its own. Asked of the server at
  // the first call unless the configuration says.
  private sharedSession: Promise<boolean> | undefined;
  // On a shared session: each connection's tag and the statements it named.
  private readonly prepared = new WeakMap<PgClient, { tag: string; names: Set<string> }>();
  // Whether the pool's dropped connections are watched (on a shared session, from its first call).
  private removalsWatched = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    if (config.embeddedDatabase) this.sharedSession = Promise.resolve(true);
  }

  counts(): PoolCounts | undefined {
    const pool = this.pool;
    return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }

  // `text` as the named statement `name`: each connection has the server parse and plan it once,
  // not at every call (for a one-row lookup that is most of the server's work: pgbench runs 2.7
  // times as many per second prepared). Outside any transaction; the rows as dataSource.query
  // answers them. One name, one text: pg refuses a name sent again with another.
  //
  // On a shared session one connection's names would collide with another's: there the name
  // carries the connection's tag, and the statements go when the pool drops the connection.
  async query<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    this.sharedSession ??= this.dataSource.query('SELECT version()').then(
      ([row]: { version: string }[]) => row.version.includes('PGlite'),
      (error: unknown) => {
        this.sharedSession = undefined; // asked again at the next call
        throw error;
      },
    );
    const pool = this.pool!;
    if (!(await this.sharedSession)) return (await pool.query({ name, text, values })).rows as T[];
    if (!this.removalsWatched) this.deallocateDropped(pool);
    const client = await pool.connect();
    try {
      const rows = (await client.query({ name: this.nameOn(client, name), text, values })).rows as T[];
      client.release();
      return rows;
    } catch (error) {
      client.release(error as Error); // as pg's pool.query does: the connection is dropped
      throw error;
    }
  }

  private nameOn(client: PgClient, name: string): string {
    let entry = this.prepared.get(client);
    if (!entry) this.prepared.set(client, (entry = { tag: randomBytes(6).toString('hex'), names: new Set() }));
    const tagged = `${name}:${entry.tag}`;
    entry.names.add(tagged);
    return tagged;
  }

  // A dropped connection's statements stay in the shared session: deallocated through another.
  private deallocateDropped(pool: PgPool): void {
    this.removalsWatched = true;
    pool.on('remove', (client) => {
      const names = this.prepared.get(client)?.names;
      if (!names?.size || !this.dataSource.isInitialized) return; // nothing named, or closing
      const sql = [...names].map((n) => `DEALLOCATE "${n}"`).join('; ');
      this.dataSource.query(sql).catch((err: unknown) => this.logger.debug({ err }, 'statements of a dropped connection not deallocated (closing?)'));
    });
  }

  private get pool(): PgPool | undefined {
    return (this.dataSource.driver as unknown as { master?: PgPool }).master;
  }
}
