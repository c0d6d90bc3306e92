import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
}

// The pg pool behind TypeORM (PostgreSQL and the embedded database alike), for the metrics.
@Injectable()
export class DatabasePool {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  counts(): PoolCounts | undefined {
    const pool = (this.dataSource.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number } }).master;
    return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }
}
