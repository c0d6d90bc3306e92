import type { Principal } from '../../kernel/principal.js';
import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AvatarService } from '../avatar/avatar.service.js';
import { Clock } from '../../platform/clock/clock.js';
import { AuditLog, type AuditActor, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { ExtensionCatalogue } from '../../kernel/extensions.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import type { UserEntity } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import type { CreateGrantInput, CreateGroupInput, CreateMemberInput, MemberQuery, UpdateGroupInput, UpdateMemberInput } from './access.dto.js';
import type { PermissionGrantEntity, UserGroupEntity, UserGroupMemberEntity } from './access.entity.js';
import { changeRefusal, type Effect } from './access.policy.js';
import { AccessRepository } from './access.repository.js';
import { decideTogether, decideWithExceptions, PermissionCatalogue, roleText, roleValue, type AccessObject, type Decision } from './permissions.js';
import { AccessSection } from './access.settings.js';
import { PagingSection } from '../../kernel/paging.settings.js';
import { accessSettings } from './access.settings.js';

export type { AccessObject } from './permissions.js';

const SAAS_ADMINS: readonly string[] = [SAAS_ROLES.superAdmin, SAAS_ROLES.saasAdmin, 'admin']; // admin: a single-tenant deployment's root is its organisation

// Permission decisions, grants and user groups. Every decision reads the grants afresh: nothing
// about an allow is cached, so a new or deleted grant counts on every replica at the next request.
@Injectable()
export class AccessService implements OnModuleInit {
  catalogue: PermissionCatalogue;

  constructor(
    private readonly config: AppConfig,
    private readonly repo: AccessRepository,
    private readonly users: UserService,
    private readonly avatars: AvatarService,
    private readonly clock: Clock,
    private readonly checks: BootChecks,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
    private readonly extensions: ExtensionCatalogue,
  ) {}

  // A stored role back as the settings declare it (a number custom role as its number).
  readonly roleOut = (text: string): string | number => roleValue(accessSettings(this.config), text);

  // Checked at init; a bad catalogue is reported with every module's problems (BootChecks).
  onModuleInit(): void {
    const catalogue = this.checks.collect(() => new PermissionCatalogue(accessSettings(this.config), this.extensions.permissionGroups));
    if (catalogue) this.catalogue = catalogue;
  }

  // The one check, for routes (`@Authenticated({ permission })`) and for objects in services.
  // An API key's answer is its own and its creator's together: the creator as it is now (its
  // roles, its grants, its denies), so a key never holds what its creator does not.
  async can(principal: Principal, permission: string, object?: AccessObject): Promise<boolean> {
    const parties = await this.parties(principal);
    return decideTogether(this.catalogue, parties, permission, await this.grantsOf(parties, permission), object);
  }

  async decision(principal: Principal, permission: string): Promise<Decision> {
    if (!this.catalogue.isKnown(permission)) throw new AppError('PermissionUnknown', `no permission "${permission}"`);
    const parties = await this.parties(principal);
    return decideWithExceptions(this.catalogue, parties, permission, await this.grantsOf(parties, permission));
  }

  // Every known permission with the caller's answer, for a UI.
  async effective(principal: Principal): Promise<({ permission: string } & Decision)[]> {
    const parties = await this.parties(principal);
    const grants = await this.grantsOf(parties);
    return [...this.catalogue.names].map((permission) => ({ permission, ...decideWithExceptions(this.catalogue, parties, permission, grants) }));
  }

  // The permissions a list response reports in `uiPermissions`.
  async uiPermissions(principal: Principal): Promise<string[]> {
    if (!this.config.section(AccessSection).pbacIsActive) return [];
    return (await this.effective(principal)).filter((d) => d.canDo).map((d) => d.permission);
  }

  // Who must agree on an answer: the caller; for an API key also its creator as it is now (a
  // deactivated or deleted creator: nobody, so nothing is allowed). Without `pbacIsActive` roles
  // decide, and a key's roles were bounded by its creator's when it was made.
  private async parties(principal: Principal): Promise<Principal[]> {
    if (principal.kind !== 'apiKey' || !this.config.section(AccessSection).pbacIsActive) return [principal];
    const creator = principal.storeId && principal.userId ? await this.users.findById(principal.storeId, principal.userId) : null;
    if (!creator?.isActive) return [];
    return [principal, { kind: 'user', storeId: principal.storeId, userId: creator.id, roles: creator.roles }];
  }

  private async grantsOf(parties: readonly Principal[], permission?: string): Promise<PermissionGrantEntity[]> {
    const [principal] = parties;
    if (!principal || principal.kind === 'machine' || !principal.storeId || !this.config.section(AccessSection).pbacIsActive) return [];
    const roles = [...new Set(parties.flatMap((p) => p.roles))];
    return this.repo.grantsFor(principal.storeId, { userId: principal.userId, roles }, permission);
  }

  // Grants: a store's admins in their store, SaaS admins at root (SaaS level), over principals
  // they outrank only (access.policy.ts). Nobody grants or denies a permission it does not hold
  // itself.
  // Each change is recorded once written (queued: permission.grant.added / .removed, group.changed).
  async createGrant(principal: Principal, store: Tenant, input: CreateGrantInput, context: AuditContext = {}): Promise<PermissionGrantEntity> {
    if (!this.catalogue.isKnown(input.permission)) throw new AppError('PermissionUnknown', `no permission "${input.permission}"`);
    const subjects = [input.roleId, input.userId, input.groupId].filter((v) => v !== undefined);
    if (subjects.length > 1) throw new AppError('ValidationFailed', 'give at most one of roleId, userId, groupId');
    const roleId = input.roleId === undefined ? null : roleText(accessSettings(this.config), input.roleId);
    if (roleId === undefined) throw new AppError('ValidationFailed', `roleId: unknown role "${input.roleId}"`);
    const user = input.userId === undefined ? null : await this.users.findById(store.id, input.userId);
    if (input.userId !== undefined && !user) throw new AppError('UserNotFound', 'no such user in this store');
    if (input.groupId !== undefined && !(await this.repo.findVisibleGroup(this.groupScope(store), input.groupId))) throw new AppError('UserGroupNotFound', 'no such group');
    this.assertMayChange(principal, store, await this.grantEffects(store, { roleId, user, groupId: input.groupId ?? null }));
    if (!(await this.can(principal, input.permission))) throw new AppError('PermissionNotHeld', `you do not hold "${input.permission}"`);
    const fields = {
      id: randomUUID(),
      permission: input.permission,
      roleId,
      userId: input.userId ?? null,
      groupId: input.groupId ?? null,
      objectId: input.objectId ?? null,
      canDo: input.canDo,
      ownerId: principal.userId!,
      createdAt: this.clock.now(),
    };
    return this.transactions.run(async (tx) => {
      const grant = await this.repo.insertGrant(grantScope(store), fields, tx);
      await this.recordGrant(principal, store, 'permission.grant.added', grant, context, tx);
      return grant;
    });
  }

  async listGrants(_principal: Principal, store: Tenant, query: PageQuery): Promise<[PermissionGrantEntity[], number, PageRequest]> {
    const page = this.page(query);
    const [rows, total] = await this.repo.listGrants(grantScope(store), page);
    return [rows, total, page];
  }

  async getGrant(_principal: Principal, store: Tenant, id: string): Promise<PermissionGrantEntity> {
    const grant = await this.repo.findGrant(grantScope(store), id);
    if (!grant) throw new AppError('PermissionGrantNotFound', 'no such grant in this store');
    return grant;
  }

  // Deleting a grant takes the right to manage grants (the route's admin roles) and rank over
  // whom it reaches, not the permission itself: a deny is lifted by whoever outranks the denied,
  // and the store's owner lifts any.
  async deleteGrant(principal: Principal, store: Tenant, id: string, context: AuditContext = {}): Promise<void> {
    const grant = await this.getGrant(principal, store, id);
    const user = grant.userId === null ? null : await this.users.findById(store.id, grant.userId);
    // a grant to a user who is gone reaches nobody
    if (grant.userId === null || user) this.assertMayChange(principal, store, await this.grantEffects(store, { roleId: grant.roleId, user, groupId: grant.groupId }, grant.ownerId));
    await this.transactions.run(async (tx) => {
      await this.repo.deleteGrant(grant.storeId, grant.id, tx);
      await this.recordGrant(principal, store, 'permission.grant.removed', grant, context, tx);
    });
  }

  // Each change and its audit entry are written in one transaction.
  private recordGrant(principal: Principal, store: Tenant, action: 'permission.grant.added' | 'permission.grant.removed', grant: PermissionGrantEntity, context: AuditContext, tx: Tx): Promise<void> {
    const { permission, canDo, roleId, userId, groupId, objectId } = grant;
    return this.audit.record(
      { storeId: store.id, action, outcome: 'success', actor: auditActor(principal), target: { type: 'permissionGrant', id: grant.id }, details: { permission, canDo, roleId, userId, groupId, objectId } },
      context,
      tx,
    );
  }

  // group.changed: the group is the target of a group's own changes, the user of a membership's.
  private recordGroup(principal: Principal, store: Tenant, change: 'created' | 'updated' | 'deleted' | 'member.added' | 'member.removed', groupId: string, context: AuditContext, tx: Tx, extra: { userId?: string; membershipId?: string; fields?: string[] } = {}): Promise<void> {
    const target = extra.userId ? { type: 'user', id: extra.userId } : { type: 'userGroup', id: groupId };
    return this.audit.record({ storeId: store.id, action: 'group.changed', outcome: 'success', actor: auditActor(principal), target, details: { change, groupId, ...extra } }, context, tx);
  }

  // The one rule of who may change what affects whom (access.policy.ts), for every change of
  // grants, groups and memberships.
  private assertMayChange(principal: Principal, store: Tenant, effects: readonly Effect[]): void {
    const ownsStore = principal.kind === 'user' && store.ownerId !== null && principal.userId === store.ownerId;
    const refused = changeRefusal(accessSettings(this.config), { userId: principal.userId!, roles: principal.roles, ownsStore }, effects);
    if (refused) throw new AppError(refused.errCode, refused.detail);
  }

  // Whom a grant reaches: its role, its user, each member of its group (in this store), or the
  // whole store. `setBy` when it is lifted.
  private async grantEffects(store: Tenant, subject: { roleId: string | null; user: UserEntity | null; groupId: string | null }, setBy?: string): Promise<Effect[]> {
    if (subject.roleId !== null) return [{ grant: 'role', roleId: subject.roleId }];
    if (subject.user) return [{ grant: 'user', user: subject.user, setBy }];
    if (subject.groupId !== null) return (await this.membersOf(store, subject.groupId)).map(({ user }) => ({ grant: 'user', user, setBy }));
    return [{ grant: 'store' }];
  }

  // What a member loses when its membership ends: the membership and the grants on its group
  // that reached it, each with who set it.
  private async lostWith(store: Tenant, member: UserGroupMemberEntity): Promise<string[]> {
    return [member.ownerId, ...(await this.repo.grantSettersOnGroup(grantScope(store), member.groupId))];
  }

  // A group's members in this store with their users (a global group's members elsewhere are
  // their stores' to manage); a membership whose user is gone affects nobody.
  private async membersOf(store: Tenant, groupId: string): Promise<{ member: UserGroupMemberEntity; user: UserEntity }[]> {
    const members = await this.repo.membersOf(store.id, groupId);
    const users = new Map((await this.users.findByIds(store.id, members.map((m) => m.userId))).map((u) => [u.id, u]));
    return members.flatMap((member) => {
      const user = users.get(member.userId);
      return user ? [{ member, user }] : [];
    });
  }

  // Groups: with `userGroupsInTenantLevel` a store's admins manage the store's groups; global
  // groups are created, changed and deleted by SaaS admins only. A new group affects nobody; a
  // group is renamed or deleted only by someone who may manage each of its members.
  async createGroup(principal: Principal, store: Tenant, input: CreateGroupInput, origin: string, context: AuditContext = {}): Promise<UserGroupEntity> {
    this.assertGroupsActive();
    const storeId = this.groupScope(store);
    if (storeId === null) this.assertSaasAdmin(principal);
    const fields = { id: randomUUID(), groupName: input.groupName, avatar: input.avatar ?? this.avatars.generate(origin), ownerId: principal.userId!, createdAt: this.clock.now() };
    return this.transactions.run(async (tx) => {
      const group = await this.repo.insertGroup(storeId, fields, tx);
      await this.recordGroup(principal, store, 'created', group.id, context, tx);
      return group;
    });
  }

  async listGroups(_principal: Principal, store: Tenant, query: PageQuery): Promise<[UserGroupEntity[], number, PageRequest]> {
    this.assertGroupsActive();
    const page = this.page(query);
    const [rows, total] = await this.repo.listGroups(this.groupScope(store), page);
    return [rows, total, page];
  }

  async getGroup(_principal: Principal, store: Tenant, id: string): Promise<UserGroupEntity> {
    this.assertGroupsActive();
    const group = await this.repo.findVisibleGroup(this.groupScope(store), id);
    if (!group) throw new AppError('UserGroupNotFound', 'no such group');
    return group;
  }

  async updateGroup(principal: Principal, store: Tenant, id: string, input: UpdateGroupInput, context: AuditContext = {}): Promise<UserGroupEntity> {
    const group = await this.getGroup(principal, store, id);
    if (group.storeId === null) this.assertSaasAdmin(principal);
    this.assertMayChange(principal, store, (await this.membersOf(store, group.id)).map(({ user }) => ({ member: user, takes: [] })));
    const changes = { ...(input.groupName !== undefined && { groupName: input.groupName }), ...(input.avatar !== undefined && { avatar: input.avatar }) };
    await this.transactions.run(async (tx) => {
      await this.repo.updateGroup(group.storeId, group.id, changes, tx);
      await this.recordGroup(principal, store, 'updated', group.id, context, tx, { fields: Object.keys(changes) });
    });
    return { ...group, ...changes };
  }

  // Its memberships and its grants end with it, at once: each member loses both.
  async deleteGroup(principal: Principal, store: Tenant, id: string, context: AuditContext = {}): Promise<void> {
    const group = await this.getGroup(principal, store, id);
    if (group.storeId === null) this.assertSaasAdmin(principal);
    const members = await this.membersOf(store, group.id);
    const grantSetters = members.length ? await this.repo.grantSettersOnGroup(grantScope(store), group.id) : [];
    this.assertMayChange(principal, store, members.map(({ member, user }) => ({ member: user, takes: [member.ownerId, ...grantSetters] })));
    await this.transactions.run(async (tx) => {
      await this.repo.deleteGroup(group.storeId, group.id, tx);
      await this.recordGroup(principal, store, 'deleted', group.id, context, tx);
    });
  }

  // A store's admins add the store's own users whom they may manage (the user-management rule),
  // to its groups or to global ones.
  async createMember(principal: Principal, store: Tenant, input: CreateMemberInput, context: AuditContext = {}): Promise<UserGroupMemberEntity> {
    const group = await this.getGroup(principal, store, input.groupId);
    this.assertMayChange(principal, store, [{ member: await this.userOf(store, input.userId), takes: [] }]);
    if (await this.repo.findMembership(store.id, group.id, input.userId)) throw new AppError('UserGroupMemberExists', 'the user is already in the group');
    const fields = { id: randomUUID(), groupId: group.id, userId: input.userId, ownerId: principal.userId!, createdAt: this.clock.now() };
    return this.transactions.run(async (tx) => {
      const member = await this.repo.insertMember(store.id, fields, tx);
      await this.recordGroup(principal, store, 'member.added', group.id, context, tx, { userId: member.userId, membershipId: member.id });
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
    this.assertMayChange(principal, store, effects);
    const existing = await this.repo.findMembership(store.id, group.id, userId);
    if (existing && existing.id !== member.id) throw new AppError('UserGroupMemberExists', 'the user is already in the group');
    const changes = { groupId: group.id, userId };
    await this.transactions.run(async (tx) => {
      await this.repo.updateMember(store.id, member.id, changes, tx);
      if (moved) {
        await this.recordGroup(principal, store, 'member.removed', member.groupId, context, tx, { userId: member.userId, membershipId: member.id });
        await this.recordGroup(principal, store, 'member.added', group.id, context, tx, { userId, membershipId: member.id });
      }
    });
    return { ...member, ...changes };
  }

  private async userOf(store: Tenant, userId: string): Promise<UserEntity> {
    const user = await this.users.findById(store.id, userId);
    if (!user) throw new AppError('UserNotFound', 'no such user in this store');
    return user;
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
    if (user) this.assertMayChange(principal, store, [{ member: user, takes: await this.lostWith(store, member) }]);
    await this.transactions.run(async (tx) => {
      await this.repo.deleteMember(store.id, id, tx);
      await this.recordGroup(principal, store, 'member.removed', member.groupId, context, tx, { userId: member.userId, membershipId: member.id });
    });
  }

  private groupScope(store: Tenant): string | null {
    return this.config.section(AccessSection).userGroupsInTenantLevel && store.codename !== ROOT_CODENAME ? store.id : null;
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

// Who made a change, as the audit log records it.
function auditActor(principal: Principal): AuditActor {
  if (principal.kind === 'machine') return { type: 'machine', id: principal.machine ?? null };
  return { type: principal.kind, id: principal.userId ?? null, roleId: principal.roles[0] ?? null };
}

// Grants made at root are SaaS-level (storeId null) and apply in every store.
function grantScope(store: Tenant): string | null {
  return store.codename === ROOT_CODENAME ? null : store.id;
}
