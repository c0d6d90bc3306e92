import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { OAuthClientEntity } from './oauth-client.entity.js';

export type NewOAuthClient = Omit<OAuthClientEntity, 'storeId' | 'createdAt' | 'updatedAt'>;
export type OAuthClientChanges = Partial<Pick<OAuthClientEntity, 'name' | 'redirectUris' | 'postLogoutRedirectUris' | 'grantTypes' | 'scopes' | 'firstParty' | 'secretHash'>>;

// A store's OAuth clients, the store id first on every method: a client of another store is
// never found, by its id or by its clientId.
@Injectable()
export class OAuthClientRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(storeId: string, row: NewOAuthClient, tx?: Tx): Promise<OAuthClientEntity> {
    const manager = managerOf(this.dataSource, tx);
    await manager.insert(OAuthClientEntity, { ...row, storeId });
    return manager.findOneByOrFail(OAuthClientEntity, { storeId, id: row.id });
  }

  findById(storeId: string, id: string, tx?: Tx): Promise<OAuthClientEntity | null> {
    return managerOf(this.dataSource, tx).findOneBy(OAuthClientEntity, { storeId, id });
  }

  // The provider's look-up: the row with its secret's hash.
  findByClientId(storeId: string, clientId: string, tx?: Tx): Promise<OAuthClientEntity | null> {
    return managerOf(this.dataSource, tx).findOneBy(OAuthClientEntity, { storeId, clientId });
  }

  findByClientIds(storeId: string, clientIds: readonly string[]): Promise<OAuthClientEntity[]> {
    if (!clientIds.length) return Promise.resolve([]);
    return this.dataSource.getRepository(OAuthClientEntity).findBy({ storeId, clientId: In([...clientIds]) });
  }

  list(storeId: string, page: PageRequest): Promise<[OAuthClientEntity[], number]> {
    return this.dataSource.getRepository(OAuthClientEntity).findAndCount({ where: { storeId }, order: { createdAt: 'DESC', id: 'DESC' }, skip: page.offset, take: page.pageRowCount });
  }

  async update(storeId: string, id: string, changes: OAuthClientChanges, tx?: Tx): Promise<OAuthClientEntity | null> {
    const manager = managerOf(this.dataSource, tx);
    await manager.update(OAuthClientEntity, { storeId, id }, { ...changes, updatedAt: () => 'now()' } as never);
    return manager.findOneBy(OAuthClientEntity, { storeId, id });
  }

  async delete(storeId: string, id: string, tx?: Tx): Promise<boolean> {
    const result = await managerOf(this.dataSource, tx).delete(OAuthClientEntity, { storeId, id });
    return (result.affected ?? 0) > 0;
  }
}
