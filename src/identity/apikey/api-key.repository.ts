import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { ApiKeyEntity } from './api-key.entity.js';

// Tenant-level: the store id comes first on every method, but one. A key presented on a request
// names its store itself, so findByKeyHash is the one lookup across stores.
@Injectable()
export class ApiKeyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(ApiKeyEntity);
  }

  insert(storeId: string, key: Omit<ApiKeyEntity, 'storeId'>, tx?: Tx): Promise<ApiKeyEntity> {
    return managerOf(this.dataSource, tx).getRepository(ApiKeyEntity).save({ ...key, storeId });
  }

  // The store's keys, or one user's when `userId` is given: newest first.
  list(storeId: string, userId: string | undefined, page: PageRequest): Promise<[ApiKeyEntity[], number]> {
    const where = userId === undefined ? { storeId } : { storeId, userId };
    return this.repo.findAndCount({ where, order: { createdAt: 'DESC', id: 'ASC' }, skip: page.offset, take: page.pageRowCount });
  }

  findById(storeId: string, id: string): Promise<ApiKeyEntity | null> {
    return this.repo.findOneBy({ storeId, id });
  }

  findByKeyHash(keyHash: string): Promise<ApiKeyEntity | null> {
    return this.repo.findOneBy({ keyHash });
  }

  // The hashes of a user's keys: what their cached sessions are kept under.
  async keyHashesOf(storeId: string, userId: string): Promise<string[]> {
    const keys = await this.repo.find({ select: { keyHash: true }, where: { storeId, userId } });
    return keys.map((k) => k.keyHash);
  }

  async markUsed(storeId: string, id: string, at: Date): Promise<void> {
    await this.repo.update({ storeId, id }, { lastUsedAt: at });
  }

  async delete(storeId: string, id: string, tx?: Tx): Promise<void> {
    await managerOf(this.dataSource, tx).getRepository(ApiKeyEntity).delete({ storeId, id });
  }
}
