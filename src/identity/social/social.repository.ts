import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, LessThan } from 'typeorm';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { SocialCodeEntity, SocialIdentityEntity } from './social.entity.js';

// Expired codes are checked on redemption; the purge leaves them this long.
const PURGE_GRACE_MS = 60 * 60 * 1000;

@Injectable()
export class SocialRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private identities(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(SocialIdentityEntity);
  }

  private codes(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(SocialCodeEntity);
  }

  findIdentity(storeId: string, provider: string, providerUserId: string): Promise<SocialIdentityEntity | null> {
    return this.identities().findOneBy({ storeId, provider, providerUserId });
  }

  async insertIdentity(storeId: string, identity: Omit<SocialIdentityEntity, 'storeId'>, tx?: Tx): Promise<void> {
    await this.identities(tx).insert({ ...identity, storeId });
  }

  async insertCode(storeId: string, code: Omit<SocialCodeEntity, 'storeId'>, now: Date): Promise<void> {
    // Codes nobody redeemed go as new ones come, so the table stays small. Only those expired an
    // hour ago: a replica whose clock runs ahead must not delete codes another one just issued.
    await this.codes().delete({ expiresAt: LessThan(new Date(now.getTime() - PURGE_GRACE_MS)) });
    // jsonb: TypeORM's insert type cannot express an open object.
    await this.codes().insert({ ...code, storeId } as never);
  }

  // Deletes and returns the row in one statement: of two concurrent redeemers, one gets it.
  // `storeId` is null only for the provider's callback, which learns its store from the row.
  async take(storeId: string | null, codeHash: string, kind: SocialCodeEntity['kind'], tx?: Tx): Promise<SocialCodeEntity | undefined> {
    const qb = managerOf(this.dataSource, tx)
      .createQueryBuilder()
      .delete()
      .from(SocialCodeEntity)
      .where('"codeHash" = :codeHash AND "kind" = :kind', { codeHash, kind });
    if (storeId) qb.andWhere('"storeId" = :storeId', { storeId });
    const result = await qb.returning('*').execute();
    const raw = (result.raw as Record<string, unknown>[])[0];
    if (!raw) return undefined;
    return {
      codeHash: raw.codeHash as string,
      storeId: raw.storeId as string,
      kind: raw.kind as SocialCodeEntity['kind'],
      payload: raw.payload as Record<string, unknown>,
      expiresAt: new Date(raw.expiresAt as string),
    };
  }
}
