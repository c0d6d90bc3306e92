import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';

export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
}

interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

// The pg pool behind TypeORM (PostgreSQL and the embedded database alike): its counts for the
// metrics, and named statements for the statements of the hottest routes.
@Injectable()
export class DatabasePool {
  // Whether statements may be named: not on PGlite (the embedded database, or a server a test
  // run shares), which serves every connection from one session, where the names of one
  // connection would collide with another's. Asked of the server at the first call.
  private named: Promise<boolean> | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    if (config.embeddedDatabase) this.named = Promise.resolve(false);
  }

  counts(): PoolCounts | undefined {
    const pool = this.pool;
    return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }

  // `text` as the named statement `name` on PostgreSQL: each connection has the server parse and
  // plan it once, not at every call (for a one-row lookup that is most of the server's work:
  // pgbench runs 2.7 times as many per second prepared). Outside any transaction; the rows as
  // dataSource.query answers them. One name, one text: pg refuses a name sent with another.
  async query<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    this.named ??= this.dataSource.query('SELECT version()').then(
      ([row]: { version: string }[]) => !row.version.includes('PGlite'),
      (error: unknown) => {
        this.named = undefined; // asked again at the next call
        throw error;
      },
    );
    if (!(await this.named)) return this.dataSource.query(text, values);
    return (await this.pool!.query({ name, text, values })).rows as T[];
  }

  private get pool(): PgPool | undefined {
    return (this.dataSource.driver as unknown as { master?: PgPool }).master;
  }
}
