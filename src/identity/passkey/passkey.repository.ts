import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, LessThan } from 'typeorm';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { PasskeyChallengeEntity, PasskeyEntity, type ChallengePurpose } from './passkey.entity.js';

// Tenant-level: the store id comes first on every method and is in every query.
@Injectable()
export class PasskeyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get passkeys() {
    return this.dataSource.getRepository(PasskeyEntity);
  }

  private get challenges() {
    return this.dataSource.getRepository(PasskeyChallengeEntity);
  }

  // Writes take the transaction of their audit entry.
  private passkeysIn(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(PasskeyEntity);
  }

  insert(storeId: string, passkey: Omit<PasskeyEntity, 'storeId'>, tx?: Tx): Promise<PasskeyEntity> {
    return this.passkeysIn(tx).save({ ...passkey, storeId });
  }

  // Oldest first: the order they were enrolled in.
  listForUser(storeId: string, userId: string): Promise<PasskeyEntity[]> {
    return this.passkeys.find({ where: { storeId, userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  countForUser(storeId: string, userId: string, tx?: Tx): Promise<number> {
    return this.passkeysIn(tx).countBy({ storeId, userId });
  }

  findForUser(storeId: string, userId: string, id: string): Promise<PasskeyEntity | null> {
    return this.passkeys.findOneBy({ storeId, userId, id });
  }

  // A credential presented at sign-in: only this store's, so another store's passkey is unknown here.
  findByCredentialId(storeId: string, credentialId: string): Promise<PasskeyEntity | null> {
    return this.passkeys.findOneBy({ storeId, credentialId });
  }

  async rename(storeId: string, userId: string, id: string, name: string): Promise<void> {
    await this.passkeys.update({ storeId, userId, id }, { name });
  }

  async markUsed(storeId: string, id: string, changes: { counter: number; backedUp: boolean; lastUsedAt: Date }): Promise<void> {
    await this.passkeys.update({ storeId, id }, changes);
  }

  // Whether a row was deleted.
  async delete(storeId: string, userId: string, id: string, tx?: Tx): Promise<boolean> {
    const result = await this.passkeysIn(tx).delete({ storeId, userId, id });
    return (result.affected ?? 0) > 0;
  }

  async deleteAllForUser(storeId: string, userId: string, tx?: Tx): Promise<void> {
    await this.passkeysIn(tx).delete({ storeId, userId });
  }

  // Also forgets the store's expired challenges, so abandoned ceremonies do not pile up.
  async insertChallenge(storeId: string, challenge: Omit<PasskeyChallengeEntity, 'storeId'>, now: Date): Promise<void> {
    await this.challenges.delete({ storeId, expiresAt: LessThan(now) });
    await this.challenges.insert({ ...challenge, storeId });
  }

  // Single use: one statement deletes and returns the row, so of two requests finishing the
  // same ceremony (on any replica) only one gets it. Expiry is the caller's check.
  async takeChallenge(storeId: string, challenge: string, purpose: ChallengePurpose): Promise<PasskeyChallengeEntity | undefined> {
    const result = await this.challenges
      .createQueryBuilder()
      .delete()
      .where('"challenge" = :challenge AND "storeId" = :storeId AND "purpose" = :purpose', { challenge, storeId, purpose })
      .returning('*')
      .execute();
    const row = (result.raw as PasskeyChallengeEntity[])[0];
    return row && { ...row, expiresAt: new Date(row.expiresAt) };
  }
}
