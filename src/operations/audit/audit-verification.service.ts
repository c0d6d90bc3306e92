import { Injectable } from '@nestjs/common';
import { chainHash, keyedChainHash } from './audit-chain.js';
import { AuditCheckpointService, type AnchorCheck } from './audit-checkpoint.service.js';
import { AuditChainKeys } from './audit-keys.js';
import { AuditRetentionService } from './audit-retention.service.js';
import type { AuditBrokenReason } from './audit.dto.js';
import type { AuditEntryEntity } from './audit.entity.js';
import { AuditRepository } from './audit.repository.js';

const VERIFY_PAGE = 1_000;

export interface ChainCheck extends AnchorCheck {
  verified: number;
  firstBrokenId: string | null;
  firstBrokenReason: AuditBrokenReason | null;
}

// How much an entry's hash proves, from none to all: unkeyed (SHA-256), the development key,
// a secret's key. A chain never goes down this scale: whoever can write the table could
// otherwise rewrite what follows a keyed entry as unkeyed.
const UNKEYED = 0;
const DEVELOPMENT_KEY = 1;
const SECRET_KEY = 2;

// Checks a store's hash chain as stored, and its newest checkpoint.
@Injectable()
export class AuditVerificationService {
  constructor(
    private readonly entries: AuditRepository,
    private readonly keys: AuditChainKeys,
    private readonly checkpoints: AuditCheckpointService,
    private readonly retention: AuditRetentionService,
  ) {}

  // Walks the store's chain in order. The first entry kept is trusted as the anchor (older
  // ones may have gone with the retention); from there each must link to the one before and
  // hash to its stored hash: an HMAC under the chain key it names, or for entries written before
  // the chain was keyed, SHA-256. Then the newest checkpoint's entry must still be there as it was.
  async verify(storeId: string): Promise<ChainCheck> {
    const [chain, anchor] = await Promise.all([this.walk(storeId), this.checkpoints.check(storeId, this.retention.retainedSince())]);
    return { ...chain, ...anchor };
  }

  private async walk(storeId: string): Promise<Pick<ChainCheck, 'verified' | 'firstBrokenId' | 'firstBrokenReason'>> {
    let verified = 0;
    let prev: AuditEntryEntity | undefined;
    let strongest = UNKEYED;
    const broken = (row: AuditEntryEntity, reason: AuditBrokenReason) => ({ verified, firstBrokenId: row.id, firstBrokenReason: reason });
    for (;;) {
      const rows = await this.entries.chainPage(storeId, prev?.seq ?? '0', VERIFY_PAGE);
      for (const row of rows) {
        const linked = prev ? row.prevHash === prev.hash && BigInt(row.seq) === BigInt(prev.seq) + 1n : row.seq !== '1' || row.prevHash === null;
        if (!linked) return broken(row, 'unlinked');
        const key = row.keyId === null ? undefined : this.keys.get(row.keyId);
        if (row.keyId !== null && !key) return broken(row, 'unknownKey');
        const strength = !key ? UNKEYED : key.development ? DEVELOPMENT_KEY : SECRET_KEY;
        if (strength < strongest) return broken(row, 'downgraded');
        if ((key ? keyedChainHash(key.key, row.prevHash, row) : chainHash(row.prevHash, row)) !== row.hash) return broken(row, 'edited');
        strongest = strength;
        verified++;
        prev = row;
      }
      if (rows.length < VERIFY_PAGE) return { verified, firstBrokenId: null, firstBrokenReason: null };
    }
  }
}
