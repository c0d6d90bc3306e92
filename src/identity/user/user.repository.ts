import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { UserEntity } from './user.entity.js';

// Tenant-level: the store id comes first on every method and is part of every query.
@Injectable()
export class UserRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(UserEntity);
  }

  findById(storeId: string, id: string, manager?: EntityManager): Promise<UserEntity | null> {
    return this.repo(manager).findOneBy({ storeId, id });
  }

  // A login's lookups (by email, by mobile) are plain SQL: TypeORM's query builder cost more CPU
  // than the statement (bench:auth's login storm). The columns are the entity's properties.
  // By email, matching the unique index (storeId, lower(email)).
  findByEmail(storeId: string, email: string, manager?: EntityManager): Promise<UserEntity | null> {
    return this.one(manager, 'SELECT * FROM "users" WHERE "storeId" = $1 AND lower("email") = lower($2)', [storeId, email]);
  }

  findByMobile(storeId: string, mobile: string, manager?: EntityManager): Promise<UserEntity | null> {
    return this.one(manager, 'SELECT * FROM "users" WHERE "storeId" = $1 AND "mobile" = $2', [storeId, mobile]);
  }

  private async one(manager: EntityManager | undefined, sql: string, parameters: unknown[]): Promise<UserEntity | null> {
    const rows: UserEntity[] = await (manager ?? this.dataSource.manager).query(sql, parameters);
    return rows.length ? Object.assign(new UserEntity(), rows[0]) : null;
  }

  findByRole(storeId: string, role: string, manager?: EntityManager): Promise<UserEntity | null> {
    return this.repo(manager)
      .createQueryBuilder('u')
      .where('u.storeId = :storeId AND :role = ANY(u.roles)', { storeId, role })
      .orderBy('u.createdAt', 'ASC')
      .getOne();
  }

  list(storeId: string, page: PageRequest): Promise<[UserEntity[], number]> {
    return this.repo().findAndCount({ where: { storeId }, order: { createdAt: 'ASC', id: 'ASC' }, skip: page.offset, take: page.pageRowCount });
  }

  async update(storeId: string, id: string, changes: Partial<UserEntity>): Promise<UserEntity | null> {
    const repo = this.repo();
    const user = await repo.findOneBy({ storeId, id });
    if (!user) return null;
    return repo.save(repo.merge(user, changes));
  }

  async delete(storeId: string, id: string): Promise<boolean> {
    const result = await this.repo().delete({ storeId, id });
    return (result.affected ?? 0) > 0;
  }

  insert(storeId: string, user: Omit<Partial<UserEntity>, 'storeId'>, manager?: EntityManager): Promise<UserEntity> {
    const repo = this.repo(manager);
    return repo.save(repo.create({ ...user, storeId }));
  }
}
