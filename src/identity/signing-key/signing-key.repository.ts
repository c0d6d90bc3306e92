import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, LessThanOrEqual, MoreThan } from 'typeorm';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { SigningKeyEntity } from './signing-key.entity.js';

// SaaS-level: one set of signing keys for every store, so no store id.
@Injectable()
export class SigningKeyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(SigningKeyEntity);
  }

  findById(id: string): Promise<SigningKeyEntity | null> {
    return this.repo().findOneBy({ id });
  }

  // Every key that still verifies at `now`, newest first.
  verifyingAt(now: Date): Promise<SigningKeyEntity[]> {
    return this.repo().find({ where: { verifyUntil: MoreThan(now) }, order: { createdAt: 'DESC' } });
  }

  // A key signs from its creation to signUntil: one created at a later time (a clock that was
  // ahead once) must not take over signing, nor stop rotation until its own signUntil.
  newestSigningAt(now: Date, tx?: Tx): Promise<SigningKeyEntity | null> {
    return this.repo(tx).findOne({ where: { createdAt: LessThanOrEqual(now), signUntil: MoreThan(now) }, order: { createdAt: 'DESC' } });
  }

  // Whether the key was still sealed as `sealed` and now is as `resealed`.
  async reseal(id: string, sealed: string, resealed: string): Promise<boolean> {
    const result = await this.repo().update({ id, privateKey: sealed }, { privateKey: resealed });
    return (result.affected ?? 0) > 0;
  }

  insert(key: SigningKeyEntity, tx?: Tx): Promise<SigningKeyEntity> {
    return this.repo(tx).save(key);
  }
}
