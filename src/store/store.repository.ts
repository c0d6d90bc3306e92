import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageRequest } from '../common/paging.js';
import { StoreEntity } from './store.entity.js';

// Stores are the tenants themselves, so this repository is platform-level (no store id first).
@Injectable()
export class StoreRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StoreEntity);
  }

  findByCodename(codename: string, manager?: EntityManager): Promise<StoreEntity | null> {
    return this.repo(manager).findOneBy({ codename });
  }

  findById(id: string, manager?: EntityManager): Promise<StoreEntity | null> {
    return this.repo(manager).findOneBy({ id });
  }

  // Codenames equal to `base` or of the form `base-N`, to pick a free one.
  async codenamesLike(base: string, manager?: EntityManager): Promise<string[]> {
    const rows: { codename: string }[] = await this.repo(manager)
      .createQueryBuilder('s')
      .select('s.codename', 'codename')
      .where("s.codename = :base OR s.codename ~ ('^' || :base || '-[0-9]+$')", { base })
      .getRawMany();
    return rows.map((r) => r.codename);
  }

  insert(store: Partial<StoreEntity>, manager: EntityManager): Promise<StoreEntity> {
    const repo = this.repo(manager);
    return repo.save(repo.create(store));
  }

  // The public store picker: every store but the SaaS level, oldest first.
  listBrief(page: PageRequest, excludeCodename: string): Promise<[StoreEntity[], number]> {
    return this.repo()
      .createQueryBuilder('s')
      .where('s.codename <> :excludeCodename', { excludeCodename })
      .orderBy('s.createdAt', 'ASC')
      .addOrderBy('s.id', 'ASC')
      .skip(page.offset)
      .take(page.pageRowCount)
      .getManyAndCount();
  }
}
