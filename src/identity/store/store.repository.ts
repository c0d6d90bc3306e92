import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { containsPattern } from '../../platform/database/like.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { StoreEntity } from './store.entity.js';

// What PATCH /v1/store changes.
export type StoreChangeableField = 'language' | 'name' | 'fullname' | 'avatar' | 'isActive';

// Above this many stores, the store picker's total is PostgreSQL's estimate (see listBrief).
export const ESTIMATED_COUNT_FROM = 10_000;

// Stores are the tenants themselves, so this repository is platform-level (no store id first).
@Injectable()
export class StoreRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(StoreEntity);
  }

  findByCodename(codename: string, tx?: Tx): Promise<StoreEntity | null> {
    return this.findOne('codename', codename, tx);
  }

  findById(id: string, tx?: Tx): Promise<StoreEntity | null> {
    return this.findOne('id', id, tx);
  }

  // Every request needs its store (through StoreCache), so this is plain SQL: building the
  // query and mapping the entity through the ORM cost more than the query itself.
  private selectList?: string;

  private columns(): string {
    return (this.selectList ??= this.dataSource
      .getMetadata(StoreEntity)
      .columns.map((c) => `"${c.databaseName}" AS "${c.propertyName}"`)
      .join(', '));
  }

  // The row, locked until `tx` ends: a change compares with it and writes it.
  findForUpdate(id: string, tx: Tx): Promise<StoreEntity | null> {
    return this.findOne('id', id, tx, ' FOR UPDATE');
  }

  private async findOne(column: 'codename' | 'id', value: string, tx?: Tx, lock = ''): Promise<StoreEntity | null> {
    const rows: Record<string, unknown>[] = await managerOf(this.dataSource, tx).query(`SELECT ${this.columns()} FROM stores WHERE "${column}" = $1 LIMIT 1${lock}`, [value]);
    return rows.length ? Object.assign(new StoreEntity(), rows[0]) : null;
  }

  // Codenames equal to `base` or of the form `base-N`, to pick a free one.
  async codenamesLike(base: string, tx?: Tx): Promise<string[]> {
    const rows: { codename: string }[] = await this.repo(tx)
      .createQueryBuilder('s')
      .select('s.codename', 'codename')
      .where("s.codename = :base OR s.codename ~ ('^' || :base || '-[0-9]+$')", { base })
      .getRawMany();
    return rows.map((r) => r.codename);
  }

  insert(store: Partial<StoreEntity>, tx: Tx): Promise<StoreEntity> {
    const repo = this.repo(tx);
    return repo.save(repo.create(store));
  }

  // The row's trigger (migration StoreChanges) announces the change to every replica's store cache
  // once the transaction commits.
  async update(id: string, changes: Partial<Pick<StoreEntity, StoreChangeableField>>, tx?: Tx): Promise<StoreEntity | null> {
    await this.repo(tx).update({ id }, changes);
    return this.findById(id, tx);
  }

  // Every store, the root and inactive ones included, oldest first (the index on
  // ("createdAt", id)); with `search`, those whose codename, name or full name contains it in any
  // case. The SaaS level's list: the count is exact.
  async list(page: PageRequest, search?: string): Promise<[StoreEntity[], number]> {
    const where = search === undefined ? '' : `WHERE codename ILIKE $1 ESCAPE '\\' OR name ILIKE $1 ESCAPE '\\' OR fullname ILIKE $1 ESCAPE '\\'`;
    const parameters = search === undefined ? [] : [containsPattern(search)];
    const n = parameters.length;
    const [rows, [{ total }]]: [Record<string, unknown>[], { total: number }[]] = await Promise.all([
      this.dataSource.query(`SELECT ${this.columns()} FROM stores ${where} ORDER BY "createdAt", id OFFSET $${n + 1} LIMIT $${n + 2}`, [...parameters, page.offset, page.pageRowCount]),
      this.dataSource.query(`SELECT count(*)::int AS total FROM stores ${where}`, parameters),
    ]);
    return [rows.map((r) => Object.assign(new StoreEntity(), r)), total];
  }

  // The public store picker: every store but the SaaS level, oldest first. The page's ids come
  // from the covering index alone (no table row is read for the rows skipped), then only the
  // page's rows are read. The count is exact up to ESTIMATED_COUNT_FROM stores; above, it is
  // PostgreSQL's own estimate (kept by ANALYZE), so a page costs the same at any size.
  // `afterCodename` (the last store of the page before) starts the page just after that store in
  // the index: any page then costs what the first does, where an offset reads every row it skips.
  // Null when no store has that codename.
  async listBrief(page: PageRequest, excludeCodename: string, afterCodename?: string): Promise<[StoreEntity[], number] | null> {
    const ids = afterCodename
      ? // two scalar subqueries, so the planner starts the index scan at their values (a join
        // with the store's row would scan the index from its start and filter)
        `SELECT id FROM stores WHERE codename <> $1
           AND ("createdAt", id) > ((SELECT "createdAt" FROM stores WHERE codename = $2), (SELECT id FROM stores WHERE codename = $2))
         ORDER BY "createdAt", id LIMIT $3`
      : `SELECT id FROM stores WHERE codename <> $1 ORDER BY "createdAt", id OFFSET $2 LIMIT $3`;
    // The page and the count side by side: one round trip's wait at any size.
    const [rows, total]: [Record<string, unknown>[], number] = await Promise.all([
      this.dataSource.query(`SELECT ${this.columns()} FROM stores JOIN (${ids}) page USING (id) ORDER BY "createdAt", id`, [
        excludeCodename,
        afterCodename ?? page.offset,
        page.pageRowCount,
      ]),
      this.countBrief(excludeCodename),
    ]);
    if (afterCodename && rows.length === 0 && !(await this.findByCodename(afterCodename))) return null;
    return [rows.map((r) => Object.assign(new StoreEntity(), r)), total];
  }

  // One statement: the estimate when it is large, else the exact count (PostgreSQL runs the
  // count's subquery only when the CASE reaches it; a table never analyzed estimates -1).
  private async countBrief(excludeCodename: string): Promise<number> {
    const [{ n }]: { n: number }[] = await this.dataSource.query(
      `SELECT CASE WHEN reltuples >= $2 THEN round(reltuples)::int - 1
                   ELSE (SELECT count(*)::int FROM stores WHERE codename <> $1) END AS n
         FROM pg_class WHERE oid = 'stores'::regclass`,
      [excludeCodename, ESTIMATED_COUNT_FROM],
    );
    return n;
  }
}
