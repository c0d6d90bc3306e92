import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AvatarService } from '../avatar/avatar.service.js';
import { Clock } from '../clock/clock.js';
import { AppError } from '../common/errors.js';
import { pageRequest, type PageQuery, type PageRequest } from '../common/paging.js';
import type { RequestContext } from '../common/request-context.js';
import { AppConfig } from '../config/app-config.js';
import { ROOT_CODENAME, type StoreEntity } from '../store/store.entity.js';
import { SAAS_ROLES } from '../user/roles.js';
import { UserService } from '../user/user.service.js';
import type { CreateGrantInput, CreateGroupInput, CreateMemberInput, MemberQuery, UpdateGroupInput } from './access.dto.js';
import type { PermissionGrantEntity, UserGroupEntity, UserGroupMemberEntity } from './access.entity.js';
import { AccessRepository } from './access.repository.js';
import { decide, decideWithExceptions, knownRoles, PermissionCatalogue, type AccessObject, type AccessPrincipal, type Decision } from './permissions.js';

export type { AccessObject, AccessPrincipal } from './permissions.js';

// The caller of a request as the access rules see it.
export function principalOf(ctx: RequestContext): AccessPrincipal {
  if (ctx.machine) return { kind: 'machine', machine: ctx.machine, storeId: ctx.store?.id, roles: [] };
  const s = ctx.session!;
  return { kind: s.principal === 'apiKey' ? 'apiKey' : 'user', storeId: s.storeId, userId: s.userId, roles: s.roles };
}

const SAAS_ADMINS: readonly string[] = [SAAS_ROLES.superAdmin, SAAS_ROLES.saasAdmin];

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

  // Checked at init, not in the constructor, so that a ConfigError lets createApp close what it
  // opened.
  onModuleInit(): void {
    this.catalogue = new PermissionCatalogue(this.config.settings);
  }

  // The one check, for routes (`@Authenticated({ permission })`) and for objects in services.
  async can(principal: AccessPrincipal, permission: string, object?: AccessObject): Promise<boolean> {
    return decide(this.catalogue, principal, permission, await this.grantsOf(principal, permission), object);
  }

  async decision(principal: AccessPrincipal, permission: string): Promise<Decision> {
    if (!this.catalogue.isKnown(permission)) throw new AppError('PermissionUnknown', `no permission "${permission}"`);
    return decideWithExceptions(this.catalogue, principal, permission, await this.grantsOf(principal, permission));
  }

  // Every known permission with the caller's answer, for a UI.
  async effective(principal: AccessPrincipal): Promise<({ permission: string } & Decision)[]> {
    const grants = await this.grantsOf(principal);
    return [...this.catalogue.names].map((permission) => ({ permission, ...decideWithExceptions(this.catalogue, principal, permission, grants) }));
  }

  // The permissions a list response reports in `uiPermissions`.
  async uiPermissions(principal: AccessPrincipal): Promise<string[]> {
    if (!this.config.settings.pbacIsActive) return [];
    return (await this.effective(principal)).filter((d) => d.canDo).map((d) => d.permission);
  }

  private async grantsOf(principal: AccessPrincipal, permission?: string): Promise<PermissionGrantEntity[]> {
    if (principal.kind === 'machine' || !principal.storeId || !this.config.settings.pbacIsActive) return [];
    return this.repo.grantsFor(principal.storeId, principal, permission);
  }

  // Grants: a store's admins in their store, SaaS admins at root (SaaS level). Nobody grants or
  // denies a permission it does not hold itself.
  async createGrant(principal: AccessPrincipal, store: StoreEntity, input: CreateGrantInput): Promise<PermissionGrantEntity> {
    if (!this.catalogue.isKnown(input.permission)) throw new AppError('PermissionUnknown', `no permission "${input.permission}"`);
    const subjects = [input.roleId, input.userId, input.groupId].filter((v) => v !== undefined);
    if (subjects.length > 1) throw new AppError('ValidationFailed', 'give at most one of roleId, userId, groupId');
    if (!(await this.can(principal, input.permission))) throw new AppError('PermissionNotHeld', `you do not hold "${input.permission}"`);
    if (input.roleId !== undefined && !knownRoles(this.config.settings).has(input.roleId)) throw new AppError('ValidationFailed', `roleId: unknown role "${input.roleId}"`);
    if (input.userId !== undefined && !(await this.users.findById(store.id, input.userId))) throw new AppError('UserNotFound', 'no such user in this store');
    if (input.groupId !== undefined && !(await this.repo.findVisibleGroup(this.groupScope(store), input.groupId))) throw new AppError('UserGroupNotFound', 'no such group');
    return this.repo.insertGrant({
      id: randomUUID(),
      storeId: grantScope(store),
      permission: input.permission,
      roleId: input.roleId ?? null,
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

  // Deleting a grant (a deny above all) is granting too: only by one who holds the permission.
  async deleteGrant(principal: AccessPrincipal, store: StoreEntity, id: string): Promise<void> {
    const grant = await this.repo.findGrant(grantScope(store), id);
    if (!grant) throw new AppError('PermissionGrantNotFound', 'no such grant in this store');
    if (!(await this.can(principal, grant.permission))) throw new AppError('PermissionNotHeld', `you do not hold "${grant.permission}"`);
    await this.repo.deleteGrant(grant.storeId, grant.id);
  }

  // Groups: with `userGroupsInTenantLevel` a store's admins manage the store's groups; global
  // groups are created, changed and deleted by SaaS admins only.
  async createGroup(principal: AccessPrincipal, store: StoreEntity, input: CreateGroupInput): Promise<UserGroupEntity> {
    this.assertGroupsActive();
    const storeId = this.groupScope(store);
    if (storeId === null) this.assertSaasAdmin(principal);
    return this.repo.insertGroup({
      id: randomUUID(),
      storeId,
      groupName: input.groupName,
      avatar: input.avatar ?? this.avatars.generate(),
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

  // A store's admins add the store's own users, to its groups or to global ones.
  async createMember(principal: AccessPrincipal, store: StoreEntity, input: CreateMemberInput): Promise<UserGroupMemberEntity> {
    const group = await this.getGroup(principal, store, input.groupId);
    if (!(await this.users.findById(store.id, input.userId))) throw new AppError('UserNotFound', 'no such user in this store');
    if (await this.repo.findMembership(store.id, group.id, input.userId)) throw new AppError('UserGroupMemberExists', 'the user is already in the group');
    return this.repo.insertMember({ id: randomUUID(), storeId: store.id, groupId: group.id, userId: input.userId, ownerId: principal.userId!, createdAt: this.clock.now() });
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
