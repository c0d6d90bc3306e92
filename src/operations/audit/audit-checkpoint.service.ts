import { sign, type KeyObject } from 'node:crypto';
import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { KeyService } from '../../identity/signing-key/key.service.js';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { auditTopic } from '../../delivery/broker/topics.js';
import { Clock } from '../../platform/clock/clock.js';
import { checkpointMac } from './audit-chain.js';
import { AuditChainKeys } from './audit-keys.js';
import { toCheckpointResponse } from './audit.dto.js';
import type { AuditCheckpointEntity } from './audit.entity.js';
import { AuditRepository } from './audit.repository.js';

// A store with entries written since its last checkpoint gets one at the next run, every minute,
// or at once when that many have been written here: the newest entries of a store go unanchored
// for a minute at most (or this many entries), at one signature per store and run at most.
export const CHECKPOINT_EVERY_MS = 60_000;
export const CHECKPOINT_AT_ENTRIES = 1_000;
// The newest checkpoints read when one's MAC does not check (forged or edited: skipped).
const CHECKPOINTS_READ = 10;

// What the newest checkpoint says of the chain.
export interface AnchorCheck {
  // The store's newest checkpoint that checks (its MAC under a chain key), null before the first.
  checkpoint: AuditCheckpointEntity | null;
  // Its entry is missing or has another hash: the newest entries were removed or replaced.
  truncated: boolean;
  // When truncated, the newest checkpoint the chain still matches (the entries after it are the
  // ones that went or changed), null when none does.
  truncatedAfter: string | null;
}

// Anchors the head of each store's chain: a checkpoint names the store's last entry and its
// hash, is signed with the service's RS256 signing key (a JWS anyone can verify against the
// JWKS) and MACed under the chain's key, kept in `audit_checkpoint` and published on the broker
// (`<service>-audit-checkpoint`) for a consumer to keep outside the database. Never on a
// request's path: made from a timer, one store after another.
@Injectable()
export class AuditCheckpointService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  // Stores with entries written here since their last checkpoint, and how many.
  private readonly pending = new Map<string, number>();
  private running: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly entries: AuditRepository,
    private readonly keys: AuditChainKeys,
    private readonly signingKeys: KeyService,
    private readonly publisher: EventPublisher,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('AuditLog');
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.run(), CHECKPOINT_EVERY_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  // Entries written to a store (committed).
  note(storeId: string, count: number): void {
    const written = (this.pending.get(storeId) ?? 0) + count;
    this.pending.set(storeId, written);
    if (written >= CHECKPOINT_AT_ENTRIES) void this.run([storeId]);
  }

  // Checkpoints the stores given (by default every store written since its last one), one after
  // another; runs follow each other. A store that fails is tried again at the next run.
  run(stores: string[] = [...this.pending.keys()]): Promise<void> {
    for (const storeId of stores) this.pending.delete(storeId);
    this.running = this.running.then(async () => {
      for (const storeId of stores) {
        try {
          await this.checkpoint(storeId);
        } catch (err) {
          this.logger.warn({ err, storeId }, 'audit checkpoint not made: tried again at the next run');
          this.pending.set(storeId, this.pending.get(storeId) ?? 0);
        }
      }
    });
    return this.running;
  }

  // Checks the store's chain against its newest checkpoint of an entry at or after `since` (older
  // ones may name an entry the retention removed).
  async check(storeId: string, since: Date): Promise<AnchorCheck> {
    const checkpoint = this.sound(await this.entries.checkpoints(storeId, since, CHECKPOINTS_READ));
    if (!checkpoint) return { checkpoint: null, truncated: false, truncatedAfter: null };
    if ((await this.entries.hashAt(storeId, checkpoint.seq)) === checkpoint.hash) return { checkpoint, truncated: false, truncatedAfter: null };
    const matching = this.sound(await this.entries.checkpoints(storeId, since, CHECKPOINTS_READ, true));
    return { checkpoint, truncated: true, truncatedAfter: matching?.seq ?? null };
  }

  // The store's last entry, anchored unless it already is.
  private async checkpoint(storeId: string): Promise<void> {
    const head = await this.entries.head(storeId);
    if (!head || head.anchored) return;
    const signedAt = this.clock.now();
    const fields = { storeId, seq: head.seq, hash: head.hash, at: head.at, signedAt };
    const signing = await this.signingKeys.signingKey();
    // `typ` and the claims tell it from a token signed with the same key: no token verifier takes it.
    const input = `${base64url({ alg: 'RS256', typ: 'audit-checkpoint', kid: signing.kid })}.${base64url({ storeId, seq: head.seq, hash: head.hash, at: head.at.toISOString(), iat: Math.floor(signedAt.getTime() / 1000) })}`;
    const { id: keyId, key } = this.keys.current;
    const checkpoint: AuditCheckpointEntity = { ...fields, keyId, mac: checkpointMac(key, fields), signature: `${input}.${await rs256(input, signing.privateKeyObject)}` };
    // Published once, by the replica whose checkpoint was kept.
    if (!(await this.entries.addCheckpoint(checkpoint))) return;
    const topic = auditTopic(this.publisher.service, 'checkpoint');
    this.publisher.publish(topic, { storeId, checkpoint: toCheckpointResponse(checkpoint) }).catch((err: unknown) => this.logger.warn({ err, topic }, 'audit checkpoint not published'));
  }

  // The first checkpoint whose MAC checks under a key the service holds.
  private sound(checkpoints: AuditCheckpointEntity[]): AuditCheckpointEntity | null {
    return (
      checkpoints.find((c) => {
        const key = this.keys.get(c.keyId);
        return key !== undefined && checkpointMac(key.key, c) === c.mac;
      }) ?? null
    );
  }
}

function base64url(json: object): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

// On libuv's pool, off the event loop: a checkpoint waits for nothing, so it may queue there.
function rs256(input: string, key: KeyObject): Promise<string> {
  return new Promise((resolve, reject) => sign('sha256', Buffer.from(input), key, (err, signature) => (err ? reject(err) : resolve(signature.toString('base64url')))));
}
