import type { Principal } from '../../kernel/principal.js';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../../platform/clock/clock.js';
import { AuditLog, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { Tenant } from '../../kernel/tenant.js';
import type { UserEntity } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { auditActorOf } from './access-audit.js';
import { grantScope, groupScope } from './access-scope.js';
import type { CreateGrantInput } from './access.dto.js';
import type { PermissionGrantEntity } from './access.entity.js';
import { assertMayChange, type Effect } from './access.policy.js';
import { AccessRepository } from './access.repository.js';
import { PermissionCheckService } from './permission-check.service.js';
import { roleText, roleValue } from './permissions.js';
import { UserGroupService } from './user-group.service.js';
import { PagingSection } from '../../kernel/paging.settings.js';
import { accessSettings } from './access.settings.js';

// Grants: a store's admins in their store, SaaS admins at root (SaaS level), over principals
// they outrank only (access.policy.ts). Nobody grants or denies a permission it does not hold
// itself.
// Each change is recorded once written (queued: permission.grant.added / .removed).
@Injectable()
export class PermissionGrantService {
  constructor(
    private readonly config: AppConfig,
    private readonly repo: AccessRepository,
    private readonly users: UserService,
    private readonly permissions: PermissionCheckService,
    private readonly groups: UserGroupService,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
  ) {}

  // A stored role back as the settings declare it (a number custom role as its number).
  readonly roleOut = (text: string): string | number => roleValue(accessSettings(this.config), text);

  async createGrant(principal: Principal, store: Tenant, input: CreateGrantInput, context: AuditContext = {}): Promise<PermissionGrantEntity> {
    if (!this.permissions.catalogue.isKnown(input.permission)) throw new AppError('PermissionUnknown', `no permission "${input.permission}"`);
    const subjects = [input.roleId, input.userId, input.groupId].filter((v) => v !== undefined);
    if (subjects.length > 1) throw new AppError('ValidationFailed', 'give at most one of roleId, userId, groupId');
    const roleId = input.roleId === undefined ? null : roleText(accessSettings(this.config), input.roleId);
    if (roleId === undefined) throw new AppError('ValidationFailed', `roleId: unknown role "${input.roleId}"`);
    const user = input.userId === undefined ? null : await this.users.findById(store.id, input.userId);
    if (input.userId !== undefined && !user) throw new AppError('UserNotFound', 'no such user in this store');
    if (input.groupId !== undefined && !(await this.repo.findVisibleGroup(groupScope(accessSettings(this.config), store), input.groupId))) throw new AppError('UserGroupNotFound', 'no such group');
    assertMayChange(accessSettings(this.config), principal, store, await this.grantEffects(store, { roleId, user, groupId: input.groupId ?? null }));
    if (!(await this.permissions.can(principal, input.permission))) throw new AppError('PermissionNotHeld', `you do not hold "${input.permission}"`);
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
      await this.record(principal, store, 'permission.grant.added', grant, context, tx);
      return grant;
    });
  }

  async listGrants(_principal: Principal, store: Tenant, query: PageQuery): Promise<[PermissionGrantEntity[], number, PageRequest]> {
    const page = pageRequest(query, this.config.section(PagingSection).paging);
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
    if (grant.userId === null || user) assertMayChange(accessSettings(this.config), principal, store, await this.grantEffects(store, { roleId: grant.roleId, user, groupId: grant.groupId }, grant.ownerId));
    await this.transactions.run(async (tx) => {
      await this.repo.deleteGrant(grant.storeId, grant.id, tx);
      await this.record(principal, store, 'permission.grant.removed', grant, context, tx);
    });
  }

  // Each change and its audit entry are written in one transaction.
  private record(principal: Principal, store: Tenant, action: 'permission.grant.added' | 'permission.grant.removed', grant: PermissionGrantEntity, context: AuditContext, tx: Tx): Promise<void> {
    const { permission, canDo, roleId, userId, groupId, objectId } = grant;
    return this.audit.record(
      { storeId: store.id, action, outcome: 'success', actor: auditActorOf(principal), target: { type: 'permissionGrant', id: grant.id }, details: { permission, canDo, roleId, userId, groupId, objectId } },
      context,
      tx,
    );
  }

  // Whom a grant reaches: its role, its user, each member of its group (in this store), or the
  // whole store. `setBy` when it is lifted.
  private async grantEffects(store: Tenant, subject: { roleId: string | null; user: UserEntity | null; groupId: string | null }, setBy?: string): Promise<Effect[]> {
    if (subject.roleId !== null) return [{ grant: 'role', roleId: subject.roleId }];
    if (subject.user) return [{ grant: 'user', user: subject.user, setBy }];
    if (subject.groupId !== null) return (await this.groups.membersOf(store, subject.groupId)).map(({ user }) => ({ grant: 'user', user, setBy }));
    return [{ grant: 'store' }];
  }
}
