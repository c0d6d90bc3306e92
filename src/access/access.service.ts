import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AvatarService } from '../avatar/avatar.service.js';
import { Clock } from '../clock/clock.js';
import { AppError } from '../common/errors.js';
import { pageRequest, type PageQuery, type PageRequest } from '../common/paging.js';
import type { RequestContext } from '../common/request-context.js';
import { AppConfig } from '../config/app-config.js';
import { ROOT_CODENAME, type StoreEntity } from '../store/store.entity.js';
import { hasAdminRole, mayManage, rolesWithin, SAAS_ROLES, TENANT_ROLES } from '../user/roles.js';
import type { UserEntity } from '../user/user.entity.js';
import { UserService } from '../user/user.service.js';
import type { CreateGrantInput, CreateGroupInput, CreateMemberInput, MemberQuery, UpdateGroupInput, UpdateMemberInput } from './access.dto.js';
import type { PermissionGrantEntity, UserGroupEntity, UserGroupMemberEntity } from './access.entity.js';
import { AccessRepository } from './access.repository.js';
import { decideTogether, decideWithExceptions, knownRoles, PermissionCatalogue, roleText, roleValue, type AccessObject, type AccessPrincipal, type Decision } from './permissions.js';

export type { AccessObject, AccessPrincipal } from './permissions.js';

// The caller of a request as the access rules see it.
export function principalOf(ctx: RequestContext): AccessPrincipal {
  if (ctx.machine) return { kind: 'machine', machine: ctx.machine, storeId: ctx.store?.id, roles: [] };
  const s = ctx.session!;
  if (s.principal === 'apiKey') return { kind: 'apiKey', storeId: s.storeId, userId: s.userId, roles: s.roles, permissions: s.permissions ?? [] };
  return { kind: 'user', storeId: s.storeId, userId: s.userId, roles: s.roles };
}

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
  ) {}

  // A stored role back as the settings declare it (a number custom role as its number).
  readonly roleOut = (text: string): string | number => roleValue(this.config.settings, text);

  // Checked at init, not in the constructor, so that a ConfigError lets createApp close what it
  // opened.
  onModuleInit(): void {
    this.catalogue = new PermissionCatalogue(this.config.settings);
  }

  // The one check, for routes (`@Authenticated({ permission })`) and for objects in services.
  // An API key's answer is its own and its creator's together: the creator as it is now (its
  // roles, its grants, its denies), so a key never holds what its creator does not.
  async can(principal: AccessPrincipal, permission: string, object?: AccessObject): Promise<boolean> {
    const parties = await this.parties(principal);
    return decideTogether(this.catalogue, parties, permission, await this.grantsOf(parties, permission), object);
  }

  async decision(principal: AccessPrincipal, permission: string): Promise<Decision> {
    if (!this.catalogue.isKnown(permission)) throw new AppError('PermissionUnknown', `no permission "${permission}"`);
    const parties = await this.parties(principal);
    return decideWithExceptions(this.catalogue, parties, permission, await this.grantsOf(parties, permission));
  }

  // Every known permission with the caller's answer, for a UI.
  async effective(principal: AccessPrincipal): Promise<({ permission: string } & Decision)[]> {
    const parties = await this.parties(principal);
    const grants = await this.grantsOf(parties);
    return [...this.catalogue.names].map((permission) => ({ permission, ...decideWithExceptions(this.catalogue, parties, permission, grants) }));
  }

  // The permissions a list response reports in `uiPermissions`.
  async uiPermissions(principal: AccessPrincipal): Promise<string[]> {
    if (!this.config.settings.pbacIsActive) return [];
    return (await this.effective(principal)).filter((d) => d.canDo).map((d) => d.permission);
  }

  // Who must agree on an answer: the caller; for an API key also its creator as it is now (a
  // deactivated or deleted creator: nobody, so nothing is allowed). Without `pbacIsActive` roles
  // decide, and a key's roles were bounded by its creator's when it was made.
  private async parties(principal: AccessPrincipal): Promise<AccessPrincipal[]> {
    if (principal.kind !== 'apiKey' || !this.config.settings.pbacIsActive) return [principal];
    const creator = principal.storeId && principal.userId ? await this.users.findById(principal.storeId, principal.userId) : null;
    if (!creator?.isActive) return [];
    return [principal, { kind: 'user', storeId: principal.storeId, userId: creator.id, roles: creator.roles }];
  }

  private async grantsOf(parties: readonly AccessPrincipal[], permission?: string): Promise<PermissionGrantEntity[]> {
    const [principal] = parties;
    if (!principal || principal.kind === 'machine' || !principal.storeId || !this.config.settings.pbacIsActive) return [];
    const roles = [...new Set(parties.flatMap((p) => p.roles))];
    return this.repo.grantsFor(principal.storeId, { userId: principal.userId, roles }, permission);
  }

  // Grants: a store's admins in their store, SaaS admins at root (SaaS level), over principals
  // they outrank only (see assertOutranksTarget). Nobody grants or denies a permission it does
  // not hold itself.
  async createGrant(principal: AccessPrincipal, store: StoreEntity, input: CreateGrantInput): Promise<PermissionGrantEntity> {
    if (!this.catalogue.isKnown(input.permission)) throw new AppError('PermissionUnknown', `no permission "${input.permission}"`);
    const subjects = [input.roleId, input.userId, input.groupId].filter((v) => v !== undefined);
    if (subjects.length > 1) throw new AppError('ValidationFailed', 'give at most one of roleId, userId, groupId');
    const roleId = input.roleId === undefined ? null : roleText(this.config.settings, input.roleId);
    if (roleId === undefined) throw new AppError('ValidationFailed', `roleId: unknown role "${input.roleId}"`);
    const user = input.userId === undefined ? null : await this.users.findById(store.id, input.userId);
    if (input.userId !== undefined && !user) throw new AppError('UserNotFound', 'no such user in this store');
    if (input.groupId !== undefined && !(await this.repo.findVisibleGroup(this.groupScope(store), input.groupId))) throw new AppError('UserGroupNotFound', 'no such group');
    await this.assertOutranksTarget(principal, store, { roleId, user, groupId: input.groupId ?? null });
    if (!(await this.can(principal, input.permission))) throw new AppError('PermissionNotHeld', `you do not hold "${input.permission}"`);
    return this.repo.insertGrant({
      id: randomUUID(),
      storeId: grantScope(store),
      permission: input.permission,
      roleId,
      userId: input.userId ?? null,
      groupId: input.groupId ?? null,
      objectId: input.objectId ?? null,
      canDo: input.canDo,
      ownerId: principal.userId!,
      createdAt: this.clock.now(),
    });
  }

  async listGrants(_principal: AccessPrincipal, store: StoreEntity, query: PageQuery): Promise<[PermissionGrantEntity[], number, PageRequest]> {
    const page = this.page(query);
    const [rows, total] = await this.repo.listGrants(grantScope(store), page);
    return [rows, total, page];
  }

  async getGrant(_principal: AccessPrincipal, store: StoreEntity, id: string): Promise<PermissionGrantEntity> {
    const grant = await this.repo.findGrant(grantScope(store), id);
    if (!grant) throw new AppError('PermissionGrantNotFound', 'no such grant in this store');
    return grant;
  }

  // Deleting a grant takes the right to manage grants (the route's admin roles) and rank over
  // its target, not the permission itself: a deny is lifted by whoever outranks the denied, and
  // the store's owner lifts any.
  async deleteGrant(principal: AccessPrincipal, store: StoreEntity, id: string): Promise<void> {
    const grant = await this.getGrant(principal, store, id);
    const user = grant.userId === null ? null : await this.users.findById(store.id, grant.userId);
    // a grant to a user who is gone protects nobody
    if (grant.userId === null || user) await this.assertOutranksTarget(principal, store, { roleId: grant.roleId, user, groupId: grant.groupId });
    await this.repo.deleteGrant(grant.storeId, grant.id);
  }

  // Grants are made and deleted only over principals one outranks, so that nobody locks out
  // those above it: a role strictly below one's own (custom roles are below every admin role;
  // SaaS admins outrank the tenant roles; a super administrator every role but its own), a user
  // one may manage other than oneself (the user-management rule), a group in one's scope. A grant
  // to the whole store reaches its owner: only the owner or a super administrator. The store's
  // owner (with its login) manages every grant of its store.
  private async assertOutranksTarget(principal: AccessPrincipal, store: StoreEntity, target: { roleId: string | null; user: UserEntity | null; groupId: string | null }): Promise<void> {
    if (principal.kind === 'user' && store.ownerId !== null && principal.userId === store.ownerId) return;
    const superAdmin = principal.roles.includes(SAAS_ROLES.superAdmin);
    let ok: boolean;
    if (target.roleId !== null) ok = this.rolesBelow(principal.roles).has(target.roleId);
    else if (target.user) ok = target.user.id !== principal.userId && mayManage({ userId: principal.userId!, roles: principal.roles }, target.user);
    else if (target.groupId !== null) ok = true;
    else ok = superAdmin;
    if (!ok) throw new AppError('GrantTargetNotManaged', 'grants are managed only for roles below yours and users you may manage (the whole store: its owner)');
  }

  private rolesBelow(roles: readonly string[]): Set<string> {
    const settings = this.config.settings;
    if (roles.includes(SAAS_ROLES.superAdmin)) return new Set([...knownRoles(settings)].filter((r) => r !== SAAS_ROLES.superAdmin));
    const below = new Set(roles.flatMap((r) => [...rolesWithin([r])].filter((lesser) => lesser !== r)));
    if (roles.includes(SAAS_ROLES.saasAdmin)) for (const r of Object.values(TENANT_ROLES)) below.add(r);
    if (hasAdminRole(roles)) for (const r of settings.customRoles) below.add(String(r.value));
    for (const r of roles) below.delete(r);
    return below;
  }

  // Groups: with `userGroupsInTenantLevel` a store's admins manage the store's groups; global
  // groups are created, changed and deleted by SaaS admins only.
  async createGroup(principal: AccessPrincipal, store: StoreEntity, input: CreateGroupInput, origin: string): Promise<UserGroupEntity> {
    this.assertGroupsActive();
    const storeId = this.groupScope(store);
    if (storeId === null) this.assertSaasAdmin(principal);
    return this.repo.insertGroup({
      id: randomUUID(),
      storeId,
      groupName: input.groupName,
      avatar: input.avatar ?? this.avatars.generate(origin),
      ownerId: principal.userId!,
      createdAt: this.clock.now(),
    });
  }

  async listGroups(_principal: AccessPrincipal, store: StoreEntity, query: PageQuery): Promise<[UserGroupEntity[], number, PageRequest]> {
    this.assertGroupsActive();
    const page = this.page(query);
    const [rows, total] = await this.repo.listGroups(this.groupScope(store), page);
    return [rows, total, page];
  }

  async getGroup(_principal: AccessPrincipal, store: StoreEntity, id: string): Promise<UserGroupEntity> {
    this.assertGroupsActive();
    const group = await this.repo.findVisibleGroup(this.groupScope(store), id);
    if (!group) throw new AppError('UserGroupNotFound', 'no such group');
    return group;
  }

  async updateGroup(principal: AccessPrincipal, store: StoreEntity, id: string, input: UpdateGroupInput): Promise<UserGroupEntity> {
    const group = await this.getGroup(principal, store, id);
    if (group.storeId === null) this.assertSaasAdmin(principal);
    return this.repo.updateGroup({ ...group, ...(input.groupName !== undefined && { groupName: input.groupName }), ...(input.avatar !== undefined && { avatar: input.avatar }) });
  }

  // Its memberships and its grants end with it, at once.
  async deleteGroup(principal: AccessPrincipal, store: StoreEntity, id: string): Promise<void> {
    const group = await this.getGroup(principal, store, id);
    if (group.storeId === null) this.assertSaasAdmin(principal);
    await this.repo.deleteGroup(group.storeId, group.id);
  }

  // A store's admins add the store's own users whom they may manage (the user-management rule),
  // to its groups or to global ones.
  async createMember(principal: AccessPrincipal, store: StoreEntity, input: CreateMemberInput): Promise<UserGroupMemberEntity> {
    const group = await this.memberGroupAndUser(principal, store, input.groupId, input.userId);
    if (await this.repo.findMembership(store.id, group.id, input.userId)) throw new AppError('UserGroupMemberExists', 'the user is already in the group');
    return this.repo.insertMember({ id: randomUUID(), storeId: store.id, groupId: group.id, userId: input.userId, ownerId: principal.userId!, createdAt: this.clock.now() });
  }

  // A membership moves to another group or user under the rules of adding one.
  async updateMember(principal: AccessPrincipal, store: StoreEntity, id: string, input: UpdateMemberInput): Promise<UserGroupMemberEntity> {
    const member = await this.getMember(principal, store, id);
    const groupId = input.groupId ?? member.groupId;
    const userId = input.userId ?? member.userId;
    const group = await this.memberGroupAndUser(principal, store, groupId, userId);
    const existing = await this.repo.findMembership(store.id, group.id, userId);
    if (existing && existing.id !== member.id) throw new AppError('UserGroupMemberExists', 'the user is already in the group');
    return this.repo.updateMember({ ...member, groupId: group.id, userId });
  }

  private async memberGroupAndUser(principal: AccessPrincipal, store: StoreEntity, groupId: string, userId: string): Promise<UserGroupEntity> {
    const group = await this.getGroup(principal, store, groupId);
    const user = await this.users.findById(store.id, userId);
    if (!user) throw new AppError('UserNotFound', 'no such user in this store');
    if (!mayManage({ userId: principal.userId!, roles: principal.roles }, user)) throw new AppError('Forbidden', 'this user is managed only by a super administrator');
    return group;
  }

  async listMembers(_principal: AccessPrincipal, store: StoreEntity, query: MemberQuery): Promise<[UserGroupMemberEntity[], number, PageRequest]> {
    this.assertGroupsActive();
    const page = this.page(query);
    const [rows, total] = await this.repo.listMembers(store.id, query.groupId, page);
    return [rows, total, page];
  }

  async getMember(_principal: AccessPrincipal, store: StoreEntity, id: string): Promise<UserGroupMemberEntity> {
    this.assertGroupsActive();
    const member = await this.repo.findMember(store.id, id);
    if (!member) throw new AppError('UserGroupMemberNotFound', 'no such membership in this store');
    return member;
  }

  async deleteMember(principal: AccessPrincipal, store: StoreEntity, id: string): Promise<void> {
    await this.getMember(principal, store, id);
    await this.repo.deleteMember(store.id, id);
  }

  private groupScope(store: StoreEntity): string | null {
    return this.config.settings.userGroupsInTenantLevel && store.codename !== ROOT_CODENAME ? store.id : null;
  }

  private assertGroupsActive(): void {
    if (!this.config.settings.userGroupsActive) throw new AppError('UserGroupsInactive', 'user groups are not enabled (settings userGroupsActive)');
  }

  private assertSaasAdmin(principal: AccessPrincipal): void {
    if (!principal.roles.some((r) => SAAS_ADMINS.includes(r))) throw new AppError('GlobalGroupSaasOnly', 'global groups are managed by SaaS admins');
  }

  private page(query: PageQuery): PageRequest {
    return pageRequest(query, this.config.settings.paging);
  }
}

// Grants made at root are SaaS-level (storeId null) and apply in every store.
function grantScope(store: StoreEntity): string | null {
  return store.codename === ROOT_CODENAME ? null : store.id;
}
