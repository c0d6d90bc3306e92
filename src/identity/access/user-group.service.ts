import type { Principal } from '../../kernel/principal.js';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AvatarService } from '../avatar/avatar.service.js';
import { Clock } from '../../platform/clock/clock.js';
import { AuditLog, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { Tenant } from '../../kernel/tenant.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import type { UserEntity } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { auditActorOf } from './access-audit.js';
import { grantScope, groupScope } from './access-scope.js';
import type { CreateGroupInput, CreateMemberInput, MemberQuery, UpdateGroupInput, UpdateMemberInput } from './access.dto.js';
import type { UserGroupEntity, UserGroupMemberEntity } from './access.entity.js';
import { assertMayChange, type Effect } from './access.policy.js';
import { AccessRepository } from './access.repository.js';
import { AccessSection, accessSettings } from './access.settings.js';
import { PagingSection } from '../../kernel/paging.settings.js';

const SAAS_ADMINS: readonly string[] = [SAAS_ROLES.superAdmin, SAAS_ROLES.saasAdmin, 'admin']; // admin: a single-tenant deployment's root is its organisation

// User groups and their memberships (settings `userGroupsActive`): with `userGroupsInTenantLevel`
// a store's admins manage the store's groups; global groups are created, changed and deleted by
// SaaS admins only. A new group affects nobody; a group is renamed or deleted only by someone who
// may manage each of its members.
// Each change is recorded once written (group.changed).
@Injectable()
export class UserGroupService {
  constructor(
    private readonly config: AppConfig,
    private readonly repo: AccessRepository,
    private readonly users: UserService,
    private readonly avatars: AvatarService,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
  ) {}

  async createGroup(principal: Principal, store: Tenant, input: CreateGroupInput, origin: string, context: AuditContext = {}): Promise<UserGroupEntity> {
    this.assertGroupsActive();
    const storeId = groupScope(accessSettings(this.config), store);
    if (storeId === null) this.assertSaasAdmin(principal);
    const fields = { id: randomUUID(), groupName: input.groupName, avatar: input.avatar ?? this.avatars.generate(origin), ownerId: principal.userId!, createdAt: this.clock.now() };
    return this.transactions.run(async (tx) => {
      const group = await this.repo.insertGroup(storeId, fields, tx);
      await this.record(principal, store, 'created', group.id, context, tx);
      return group;
    });
  }

  async listGroups(_principal: Principal, store: Tenant, query: PageQuery): Promise<[UserGroupEntity[], number, PageRequest]> {
    this.assertGroupsActive();
    const page = this.page(query);
    const [rows, total] = await this.repo.listGroups(groupScope(accessSettings(this.config), store), page);
    return [rows, total, page];
  }

  async getGroup(_principal: Principal, store: Tenant, id: string): Promise<UserGroupEntity> {
    this.assertGroupsActive();
    const group = await this.repo.findVisibleGroup(groupScope(accessSettings(this.config), store), id);
    if (!group) throw new AppError('UserGroupNotFound', 'no such group');
    return group;
  }

  async updateGroup(principal: Principal, store: Tenant, id: string, input: UpdateGroupInput, context: AuditContext = {}): Promise<UserGroupEntity> {
    const group = await this.getGroup(principal, store, id);
    if (group.storeId === null) this.assertSaasAdmin(principal);
    assertMayChange(accessSettings(this.config), principal, store, (await this.membersOf(store, group.id)).map(({ user }) => ({ member: user, takes: [] })));
    const changes = { ...(input.groupName !== undefined && { groupName: input.groupName }), ...(input.avatar !== undefined && { avatar: input.avatar }) };
    await this.transactions.run(async (tx) => {
      await this.repo.updateGroup(group.storeId, group.id, changes, tx);
      await this.record(principal, store, 'updated', group.id, context, tx, { fields: Object.keys(changes) });
    });
    return { ...group, ...changes };
  }

  // Its memberships and its grants end with it, at once: each member loses both.
  async deleteGroup(principal: Principal, store: Tenant, id: string, context: AuditContext = {}): Promise<void> {
    const group = await this.getGroup(principal, store, id);
    if (group.storeId === null) this.assertSaasAdmin(principal);
    const members = await this.membersOf(store, group.id);
    const grantSetters = members.length ? await this.repo.grantSettersOnGroup(grantScope(store), group.id) : [];
    assertMayChange(accessSettings(this.config), principal, store, members.map(({ member, user }) => ({ member: user, takes: [member.ownerId, ...grantSetters] })));
    await this.transactions.run(async (tx) => {
      await this.repo.deleteGroup(group.storeId, group.id, tx);
      await this.record(principal, store, 'deleted', group.id, context, tx);
    });
  }

  // A store's admins add the store's own users whom they may manage (the user-management rule),
  // to its groups or to global ones.
  async createMember(principal: Principal, store: Tenant, input: CreateMemberInput, context: AuditContext = {}): Promise<UserGroupMemberEntity> {
    const group = await this.getGroup(principal, store, input.groupId);
    assertMayChange(accessSettings(this.config), principal, store, [{ member: await this.userOf(store, input.userId), takes: [] }]);
    if (await this.repo.findMembership(store.id, group.id, input.userId)) throw new AppError('UserGroupMemberExists', 'the user is already in the group');
    const fields = { id: randomUUID(), groupId: group.id, userId: input.userId, ownerId: principal.userId!, createdAt: this.clock.now() };
    return this.transactions.run(async (tx) => {
      const member = await this.repo.insertMember(store.id, fields, tx);
      await this.record(principal, store, 'member.added', group.id, context, tx, { userId: member.userId, membershipId: member.id });
      return member;
    });
  }

  // A membership moves to another group or user under the rules of adding one; its user, when
  // it leaves, loses it as if it were removed.
  // A move is recorded as its removal from the old group or user and its addition to the new.
  async updateMember(principal: Principal, store: Tenant, id: string, input: UpdateMemberInput, context: AuditContext = {}): Promise<UserGroupMemberEntity> {
    const member = await this.getMember(principal, store, id);
    const userId = input.userId ?? member.userId;
    const group = await this.getGroup(principal, store, input.groupId ?? member.groupId);
    const to = await this.userOf(store, userId);
    const from = await this.users.findById(store.id, member.userId);
    const moved = group.id !== member.groupId || userId !== member.userId;
    const effects: Effect[] = [{ member: to, takes: [] }];
    if (from) effects.unshift({ member: from, takes: moved ? await this.lostWith(store, member) : [] });
    assertMayChange(accessSettings(this.config), principal, store, effects);
    const existing = await this.repo.findMembership(store.id, group.id, userId);
    if (existing && existing.id !== member.id) throw new AppError('UserGroupMemberExists', 'the user is already in the group');
    const changes = { groupId: group.id, userId };
    await this.transactions.run(async (tx) => {
      await this.repo.updateMember(store.id, member.id, changes, tx);
      if (moved) {
        await this.record(principal, store, 'member.removed', member.groupId, context, tx, { userId: member.userId, membershipId: member.id });
        await this.record(principal, store, 'member.added', group.id, context, tx, { userId, membershipId: member.id });
      }
    });
    return { ...member, ...changes };
  }

  async listMembers(_principal: Principal, store: Tenant, query: MemberQuery): Promise<[UserGroupMemberEntity[], number, PageRequest]> {
    this.assertGroupsActive();
    const page = this.page(query);
    const [rows, total] = await this.repo.listMembers(store.id, query.groupId, page);
    return [rows, total, page];
  }

  async getMember(_principal: Principal, store: Tenant, id: string): Promise<UserGroupMemberEntity> {
    this.assertGroupsActive();
    const member = await this.repo.findMember(store.id, id);
    if (!member) throw new AppError('UserGroupMemberNotFound', 'no such membership in this store');
    return member;
  }

  // Removing a membership takes the right to manage its user, as moving it does.
  async deleteMember(principal: Principal, store: Tenant, id: string, context: AuditContext = {}): Promise<void> {
    const member = await this.getMember(principal, store, id);
    const user = await this.users.findById(store.id, member.userId);
    if (user) assertMayChange(accessSettings(this.config), principal, store, [{ member: user, takes: await this.lostWith(store, member) }]);
    await this.transactions.run(async (tx) => {
      await this.repo.deleteMember(store.id, id, tx);
      await this.record(principal, store, 'member.removed', member.groupId, context, tx, { userId: member.userId, membershipId: member.id });
    });
  }

  // A group's members in this store with their users (a global group's members elsewhere are
  // their stores' to manage); a membership whose user is gone affects nobody. Also whom a grant
  // on the group reaches.
  async membersOf(store: Tenant, groupId: string): Promise<{ member: UserGroupMemberEntity; user: UserEntity }[]> {
    const members = await this.repo.membersOf(store.id, groupId);
    const users = new Map((await this.users.findByIds(store.id, members.map((m) => m.userId))).map((u) => [u.id, u]));
    return members.flatMap((member) => {
      const user = users.get(member.userId);
      return user ? [{ member, user }] : [];
    });
  }

  // What a member loses when its membership ends: the membership and the grants on its group
  // that reached it, each with who set it.
  private async lostWith(store: Tenant, member: UserGroupMemberEntity): Promise<string[]> {
    return [member.ownerId, ...(await this.repo.grantSettersOnGroup(grantScope(store), member.groupId))];
  }

  private async userOf(store: Tenant, userId: string): Promise<UserEntity> {
    const user = await this.users.findById(store.id, userId);
    if (!user) throw new AppError('UserNotFound', 'no such user in this store');
    return user;
  }

  // group.changed: the group is the target of a group's own changes, the user of a membership's.
  private record(principal: Principal, store: Tenant, change: 'created' | 'updated' | 'deleted' | 'member.added' | 'member.removed', groupId: string, context: AuditContext, tx: Tx, extra: { userId?: string; membershipId?: string; fields?: string[] } = {}): Promise<void> {
    const target = extra.userId ? { type: 'user', id: extra.userId } : { type: 'userGroup', id: groupId };
    return this.audit.record({ storeId: store.id, action: 'group.changed', outcome: 'success', actor: auditActorOf(principal), target, details: { change, groupId, ...extra } }, context, tx);
  }

  private assertGroupsActive(): void {
    if (!this.config.section(AccessSection).userGroupsActive) throw new AppError('UserGroupsInactive', 'user groups are not enabled (settings userGroupsActive)');
  }

  private assertSaasAdmin(principal: Principal): void {
    if (!principal.roles.some((r) => SAAS_ADMINS.includes(r))) throw new AppError('GlobalGroupSaasOnly', 'global groups are managed by SaaS admins');
  }

  private page(query: PageQuery): PageRequest {
    return pageRequest(query, this.config.section(PagingSection).paging);
  }
}
