import type { Principal } from '../../kernel/principal.js';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { ExtensionCatalogue } from '../../kernel/extensions.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { UserService } from '../user/user.service.js';
import type { PermissionGrantEntity } from './access.entity.js';
import { AccessRepository } from './access.repository.js';
import { decideTogether, decideWithExceptions, PermissionCatalogue, type AccessObject, type Decision } from './permissions.js';
import { AccessSection, accessSettings } from './access.settings.js';

export type { AccessObject } from './permissions.js';

// Permission decisions (PBAC): whether a caller holds a permission, for a route or for one data
// object, and every answer of the caller for a UI. Every decision reads the grants afresh: nothing
// about an allow is cached, so a new or deleted grant counts on every replica at the next request.
@Injectable()
export class PermissionCheckService implements OnModuleInit {
  catalogue: PermissionCatalogue;

  constructor(
    private readonly config: AppConfig,
    private readonly repo: AccessRepository,
    private readonly users: UserService,
    private readonly checks: BootChecks,
    private readonly extensions: ExtensionCatalogue,
  ) {}

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
}
