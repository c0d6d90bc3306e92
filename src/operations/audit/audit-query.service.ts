import { Injectable } from '@nestjs/common';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import type { AuditEntryEntity } from './audit.entity.js';
import { AuditRepository, type AuditFilter, type AuditPosition } from './audit.repository.js';

const HOUR_MS = 3_600_000;
const SUCCEEDED = 'user.login.succeeded';
const FAILED = 'user.login.failed';

// Sign-ins of a period starting at `from` (an ISO instant, UTC).
export interface SignInBucket {
  from: string;
  succeeded: number;
  failed: number;
}

export interface SignInSeries {
  // The last 24 hours by the hour, oldest first: the current hour last.
  last24h: SignInBucket[];
  // The last 7 days by the day (UTC), oldest first: today last.
  last7d: SignInBucket[];
}

// Reading a store's log: its entries filtered, a page at a time (the list and the export), their
// count, and the sign-in series of the console's overview.
@Injectable()
export class AuditQueryService {
  constructor(
    private readonly entries: AuditRepository,
    private readonly clock: Clock,
  ) {}

  page(storeId: string, filter: AuditFilter, position: AuditPosition | undefined, limit: number): Promise<AuditEntryEntity[]> {
    return this.entries.page(storeId, filter, position, limit);
  }

  count(storeId: string, filter: AuditFilter): Promise<number> {
    return this.entries.count(storeId, filter);
  }

  // The store's sign-ins (user.login.succeeded) and refused ones (user.login.failed) per hour
  // over the last 24 hours and per day over the last 7, from the service's clock (periods in
  // UTC, the current one included). Counted by the database from the action index; a period
  // without entries is 0. Entries still queued (up to ~200 ms) are not counted yet.
  async signIns(storeId: string): Promise<SignInSeries> {
    const now = this.clock.now().getTime();
    const hour = Math.floor(now / HOUR_MS) * HOUR_MS;
    const day = Math.floor(now / DAY_MS) * DAY_MS;
    const series = async (unit: 'hour' | 'day', size: number, last: number, count: number) => {
      const from = last - (count - 1) * size;
      const rows = await this.entries.countPerPeriod(storeId, [SUCCEEDED, FAILED], unit, new Date(from), new Date(last + size));
      const buckets = Array.from({ length: count }, (_, i) => ({ from: new Date(from + i * size).toISOString(), succeeded: 0, failed: 0 }));
      for (const row of rows) {
        const bucket = buckets[Math.round((new Date(row.from).getTime() - from) / size)];
        if (!bucket) continue;
        if (row.action === SUCCEEDED) bucket.succeeded += row.count;
        else bucket.failed += row.count;
      }
      return buckets;
    };
    const [last24h, last7d] = await Promise.all([series('hour', HOUR_MS, hour, 24), series('day', DAY_MS, day, 7)]);
    return { last24h, last7d };
  }
}
