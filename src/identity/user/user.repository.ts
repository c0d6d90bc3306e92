import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { DatabasePool } from '../../platform/database/database-pool.js';
import { containsPattern } from '../../platform/database/like.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { UserEntity } from './user.entity.js';

// The entity's columns, named: a named statement keeps the columns it was planned with, so a
// column added later (a migration while an older replica runs) must not change what it returns.
const COLUMNS = '"id", "storeId", "email", "mobile", "fullname", "name", "surname", "passwordHash", "avatar", "roles", "emailVerified", "mobileVerified", "isActive", "totpEnabled", "hasPasskey", "ownerId", "language", "customData", "recordVersion", "createdAt", "updatedAt"';

// Tenant-level: the store id comes first on every method and is part of every query.
@Injectable()
export class UserRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly pool: DatabasePool,
  ) {}

  private repo(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(UserEntity);
  }

  findById(storeId: string, id: string, tx?: Tx): Promise<UserEntity | null> {
    return this.repo(tx).findOneBy({ storeId, id });
  }

  findByIds(storeId: string, ids: readonly string[]): Promise<UserEntity[]> {
    return ids.length ? this.repo().findBy({ storeId, id: In([...ids]) }) : Promise.resolve([]);
  }

  // A login's lookups (by email, by mobile) are plain SQL: TypeORM's query builder cost more CPU
  // than the statement (bench:auth's login storm). The columns are the entity's properties.
  // Outside a transaction they are named statements (DatabasePool): planned once per connection.
  // By email, matching the unique index (storeId, lower(email)).
  findByEmail(storeId: string, email: string, tx?: Tx): Promise<UserEntity | null> {
    return this.one(tx, 'user-by-email', `SELECT ${COLUMNS} FROM "users" WHERE "storeId" = $1 AND lower("email") = lower($2)`, [storeId, email]);
  }

  findByMobile(storeId: string, mobile: string, tx?: Tx): Promise<UserEntity | null> {
    return this.one(tx, 'user-by-mobile', `SELECT ${COLUMNS} FROM "users" WHERE "storeId" = $1 AND "mobile" = $2`, [storeId, mobile]);
  }

  private async one(tx: Tx | undefined, name: string, sql: string, parameters: unknown[]): Promise<UserEntity | null> {
    const rows: UserEntity[] = tx ? await managerOf(this.dataSource, tx).query(sql, parameters) : await this.pool.query(name, sql, parameters);
    return rows.length ? Object.assign(new UserEntity(), rows[0]) : null;
  }

  findByRole(storeId: string, role: string, tx?: Tx): Promise<UserEntity | null> {
    return this.repo(tx)
      .createQueryBuilder('u')
      .where('u.storeId = :storeId AND :role = ANY(u.roles)', { storeId, role })
      .orderBy('u.createdAt', 'ASC')
      .getOne();
  }

  // A page of the store's users, oldest first; with `search`, those whose email, mobile, full
  // name, name or surname contains it, in any case (a parameterised ILIKE, its `%` and `_`
  // taken literally). The store's rows come from its index; the match is checked on each of them.
  list(storeId: string, page: PageRequest, search?: string): Promise<[UserEntity[], number]> {
    const q = this.repo().createQueryBuilder('u').where('u.storeId = :storeId', { storeId });
    if (search !== undefined) {
      const fields = ['email', 'mobile', 'fullname', 'name', 'surname'].map((f) => `u.${f} ILIKE :pattern ESCAPE '\\'`);
      q.andWhere(`(${fields.join(' OR ')})`, { pattern: containsPattern(search) });
    }
    return q.orderBy('u.createdAt', 'ASC').addOrderBy('u.id', 'ASC').offset(page.offset).limit(page.pageRowCount).getManyAndCount();
  }

  // How many users the store has (the console's overview).
  count(storeId: string): Promise<number> {
    return this.repo().countBy({ storeId });
  }

  async update(storeId: string, id: string, changes: Partial<UserEntity>, tx?: Tx): Promise<UserEntity | null> {
    const repo = this.repo(tx);
    const user = await repo.findOneBy({ storeId, id });
    if (!user) return null;
    return repo.save(repo.merge(user, changes));
  }

  // The user's app factors, without touching recordVersion: they are not part of the profile.
  async setAppFactors(storeId: string, id: string, factors: { totpEnabled?: boolean; hasPasskey?: boolean }, tx?: Tx): Promise<void> {
    const set = Object.entries(factors).filter(([, v]) => v !== undefined);
    if (!set.length) return;
    await managerOf(this.dataSource, tx).query(`UPDATE "users" SET ${set.map(([k], i) => `"${k}" = $${i + 3}`).join(', ')} WHERE "storeId" = $1 AND "id" = $2`, [storeId, id, ...set.map(([, v]) => v)]);
  }

  async delete(storeId: string, id: string, tx?: Tx): Promise<boolean> {
    const result = await this.repo(tx).delete({ storeId, id });
    return (result.affected ?? 0) > 0;
  }

  insert(storeId: string, user: Omit<Partial<UserEntity>, 'storeId'>, tx?: Tx): Promise<UserEntity> {
    const repo = this.repo(tx);
    return repo.save(repo.create({ ...user, storeId }));
  }
}
