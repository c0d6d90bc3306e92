import { Injectable } from '@nestjs/common';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { InjectRedis, type OptionalRedis } from '../../platform/redis/redis.module.js';

// The jti of every machine token accepted, kept until the token expires, so each is used once:
// in Redis when configured (one SET NX: every replica sees it at once), in process otherwise.
// Not an LRU: evicting a live jti early would let its token be replayed.
@Injectable()
export class UsedTokenIds {
  private readonly prefix: string;
  private readonly local = new Map<string, number>();
  private nextSweep = 0;

  constructor(
    private readonly clock: Clock,
    config: AppConfig,
    @InjectRedis() private readonly redis: OptionalRedis,
  ) {
    this.prefix = `${config.env.PROJECT_CODENAME}:${config.env.SERVICE_CODENAME}:m2m-jti:`;
  }

  // True the first time `id` is seen before `expiresAtMs`, false for a replay.
  async claim(id: string, expiresAtMs: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    const ttlMs = Math.max(1, expiresAtMs - now);
    if (this.redis) return (await this.redis.set(this.prefix + id, '1', 'PX', ttlMs, 'NX')) === 'OK';
    this.sweep(now);
    const known = this.local.get(id);
    if (known !== undefined && known > now) return false;
    this.local.set(id, now + ttlMs);
    return true;
  }

  // Drops expired ids at most once a minute: the map holds only live tokens' ids.
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + 60_000;
    for (const [id, expiresAt] of this.local) if (expiresAt <= now) this.local.delete(id);
  }
}
