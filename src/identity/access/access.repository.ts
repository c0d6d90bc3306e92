import { Injectable } from '@nestjs/common';
import { DataSource, IsNull, type FindOptionsWhere } from 'typeorm';
import type { PageRequest } from '../../kernel/paging.js';
import { managerOf, type Tx } from '../../platform/database/transactions.js';
import { PermissionGrantEntity, UserGroupEntity, UserGroupMemberEntity } from './access.entity.js';

// `storeId` first on every tenant-level method; null names the SaaS level (grants and groups
// made at root, which apply in every store).
@Injectable()
export class AccessRepository {
  constructor(private readonly dataSource: DataSource) {}

  // Writes take the transaction of the change's audit entry (Transactions.run in the service).
  private get grants() {
    return this.grantsIn();
  }

  private get groups() {
    return this.groupsIn();
  }

  private get members() {
    return this.membersIn();
  }

  private grantsIn(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(PermissionGrantEntity);
  }

  private groupsIn(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(UserGroupEntity);
  }

  private membersIn(tx?: Tx) {
    return managerOf(this.dataSource, tx).getRepository(UserGroupMemberEntity);
  }

  // Every grant that can reach this caller in its store: its roles, itself, its groups, the
  // whole store; the store's own and the SaaS level's. Read per decision, never cached.
  grantsFor(storeId: string, subject: { userId?: string; roles: readonly string[] }, permission?: string): Promise<PermissionGrantEntity[]> {
    const params: unknown[] = [storeId, [...subject.roles], subject.userId ?? null];
    const byPermission = permission === undefined ? '' : `AND g."permission" = $${params.push(permission)}`;
    return this.grants.query(
      `SELECT g.* FROM "permission_grants" g
        WHERE (g."storeId" = $1 OR g."storeId" IS NULL) ${byPermission}
          AND (g."roleId" = ANY($2::text[])
            OR g."userId" = $3::uuid
            OR g."groupId" IN (SELECT m."groupId" FROM "user_group_members" m WHERE m."storeId" = $1 AND m."userId" = $3::uuid)
            OR (g."roleId" IS NULL AND g."userId" IS NULL AND g."groupId" IS NULL))`,
      params,
    );
  }

  insertGrant(storeId: string | null, grant: Omit<PermissionGrantEntity, 'storeId'>, tx?: Tx): Promise<PermissionGrantEntity> {
    return this.grantsIn(tx).save({ ...grant, storeId });
  }

  listGrants(storeId: string | null, page: PageRequest): Promise<[PermissionGrantEntity[], number]> {
    return this.grants.findAndCount({ where: { storeId: storeId ?? IsNull() }, order: { createdAt: 'ASC', id: 'ASC' }, skip: page.offset, take: page.pageRowCount });
  }

  findGrant(storeId: string | null, id: string): Promise<PermissionGrantEntity | null> {
    return this.grants.findOneBy({ storeId: storeId ?? IsNull(), id });
  }

  // Who set the grants on a group that reach its members in this store: the store's own and the
  // SaaS level's.
  async grantSettersOnGroup(storeId: string | null, groupId: string): Promise<string[]> {
    const where: FindOptionsWhere<PermissionGrantEntity>[] = storeId ? [{ storeId, groupId }, { storeId: IsNull(), groupId }] : [{ storeId: IsNull(), groupId }];
    return (await this.grants.find({ select: { ownerId: true }, where })).map((g) => g.ownerId);
  }

  async deleteGrant(storeId: string | null, id: string, tx?: Tx): Promise<boolean> {
    const res = await this.grantsIn(tx).delete({ storeId: storeId ?? IsNull(), id });
    return !!res.affected;
  }

  insertGroup(storeId: string | null, group: Omit<UserGroupEntity, 'storeId'>, tx?: Tx): Promise<UserGroupEntity> {
    return this.groupsIn(tx).save({ ...group, storeId });
  }

  // A store sees its own groups and the global ones.
  listGroups(storeId: string | null, page: PageRequest): Promise<[UserGroupEntity[], number]> {
    const where: FindOptionsWhere<UserGroupEntity>[] = storeId ? [{ storeId }, { storeId: IsNull() }] : [{ storeId: IsNull() }];
    return this.groups.findAndCount({ where, order: { createdAt: 'ASC', id: 'ASC' }, skip: page.offset, take: page.pageRowCount });
  }

  findVisibleGroup(storeId: string | null, id: string): Promise<UserGroupEntity | null> {
    return this.groups.findOne({ where: storeId ? [{ storeId, id }, { storeId: IsNull(), id }] : [{ storeId: IsNull(), id }] });
  }

  async updateGroup(storeId: string | null, id: string, changes: Partial<Pick<UserGroupEntity, 'groupName' | 'avatar'>>, tx?: Tx): Promise<void> {
    if (Object.keys(changes).length) await this.groupsIn(tx).update({ storeId: storeId ?? IsNull(), id }, changes);
  }

  // Its memberships and grants go with it (ON DELETE CASCADE).
  async deleteGroup(storeId: string | null, id: string, tx?: Tx): Promise<boolean> {
    const res = await this.groupsIn(tx).delete({ storeId: storeId ?? IsNull(), id });
    return !!res.affected;
  }

  insertMember(storeId: string, member: Omit<UserGroupMemberEntity, 'storeId'>, tx?: Tx): Promise<UserGroupMemberEntity> {
    return this.membersIn(tx).save({ ...member, storeId });
  }

  findMember(storeId: string, id: string): Promise<UserGroupMemberEntity | null> {
    return this.members.findOneBy({ storeId, id });
  }

  findMembership(storeId: string, groupId: string, userId: string): Promise<UserGroupMemberEntity | null> {
    return this.members.findOneBy({ storeId, groupId, userId });
  }

  // Every membership of a group held by this store's users (unpaged: the access rules weigh them all).
  membersOf(storeId: string, groupId: string): Promise<UserGroupMemberEntity[]> {
    return this.members.findBy({ storeId, groupId });
  }

  listMembers(storeId: string, groupId: string | undefined, page: PageRequest): Promise<[UserGroupMemberEntity[], number]> {
    return this.members.findAndCount({ where: { storeId, ...(groupId && { groupId }) }, order: { createdAt: 'ASC', id: 'ASC' }, skip: page.offset, take: page.pageRowCount });
  }

  async updateMember(storeId: string, id: string, changes: Pick<UserGroupMemberEntity, 'groupId' | 'userId'>, tx?: Tx): Promise<void> {
    await this.membersIn(tx).update({ storeId, id }, changes);
  }

  async deleteMember(storeId: string, id: string, tx?: Tx): Promise<boolean> {
    const res = await this.membersIn(tx).delete({ storeId, id });
    return !!res.affected;
  }
}
