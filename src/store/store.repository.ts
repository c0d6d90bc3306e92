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
    return this.findOne('codename', codename, manager);
  }

  findById(id: string, manager?: EntityManager): Promise<StoreEntity | null> {
    return this.findOne('id', id, manager);
  }

  // Every request needs its store (through StoreCache), so this is plain SQL: building the
  // query and mapping the entity through the ORM cost more than the query itself.
  private selectList?: string;

  private async findOne(column: 'codename' | 'id', value: string, manager?: EntityManager): Promise<StoreEntity | null> {
    this.selectList ??= this.dataSource
      .getMetadata(StoreEntity)
      .columns.map((c) => `"${c.databaseName}" AS "${c.propertyName}"`)
      .join(', ');
    const rows: Record<string, unknown>[] = await (manager ?? this.dataSource.manager).query(`SELECT ${this.selectList} FROM stores WHERE "${column}" = $1 LIMIT 1`, [value]);
    return rows.length ? Object.assign(new StoreEntity(), rows[0]) : null;
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

  async update(id: string, changes: Partial<Pick<StoreEntity, 'language'>>): Promise<StoreEntity | null> {
    await this.repo().update({ id }, changes);
    return this.findById(id);
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
