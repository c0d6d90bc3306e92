import { Injectable, type OnModuleInit } from '@nestjs/common';
import { declareCustomProperties, pickCustomData } from '../../kernel/custom-properties.js';
import { AppError } from '../../kernel/errors.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { ApiKeyService } from '../apikey/api-key.service.js';
import { BucketService } from '../bucket/bucket.service.js';
import { MfaService } from '../mfa/mfa.service.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { afterCommit } from '../../platform/database/transactions.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import { SessionService } from '../session/session.service.js';
import type { SessionData } from '../../kernel/principal.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { AuditLog, auditActor, type AuditAction, type AuditContext, type AuditInput } from '../../kernel/audit.js';
import { hasAdminRole, levelRoles, mayManage, outranks, SAAS_ROLES } from '../../kernel/roles.js';
import type { SessionEntity } from '../session/index.js';
import { SYSTEM_USER_FIELDS, type UserEntity } from '../user/index.js';
import { PasswordHasher } from '../user/password.js';
import { UserService, type NewPassword } from '../user/user.service.js';
import { UpdateUserInput, type CreateUserInput, type UserListQuery } from './user-admin.dto.js';
import { CustomPropertiesSection } from '../../kernel/custom-properties.settings.js';
import { PagingSection } from '../../kernel/paging.settings.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';
import { UserSection } from '../user/user.settings.js';

const SAAS_MANAGERS: readonly string[] = [SAAS_ROLES.superAdmin, SAAS_ROLES.saasAdmin];

// User management by administrators, and by users on their own profile. The route policy has
// checked the login and the store; the rules on which object and which field live here.
@Injectable()
export class UserAdminService implements OnModuleInit {
  constructor(
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly apiKeys: ApiKeyService,
    private readonly bucket: BucketService,
    private readonly passwords: PasswordHasher,
    private readonly config: AppConfig,
    private readonly events: DomainEvents,
    private readonly checks: BootChecks,
    private readonly mfa: MfaService,
    private readonly audit: AuditLog,
  ) {}

  onModuleInit(): void {
    const optional = this.config.section(CustomPropertiesSection).customUserProperties.map((p) => ({ ...p, required: false }));
    this.checks.collect(() => declareCustomProperties(UpdateUserInput, optional, SYSTEM_USER_FIELDS, 'customUserProperties'));
  }

  // POST /users: admins of the store (any role they may grant), or anyone when
  // userRegisterIsPublic (the level's plain user role only). SaaS-level users only by superAdmin
  // or saasAdmin; a single-tenant deployment's root store is its organisation, managed like a store.
  async create(actor: SessionData | undefined, store: Tenant, input: CreateUserInput, origin: string, context: AuditContext = {}): Promise<UserEntity> {
    const atRoot = store.codename === ROOT_CODENAME;
    if (atRoot && this.config.section(TenancySection).tenancy === 'multi') {
      if (!actor) throw new AppError('Unauthorized', 'SaaS-level users are created by superAdmin or saasAdmin');
      if (!actor.roles.some((r) => SAAS_MANAGERS.includes(r))) throw new AppError('Forbidden', 'SaaS-level users are created by superAdmin or saasAdmin');
    }
    if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);
    const admin = actor !== undefined && hasAdminRole(actor.roles);
    if (input.roleId !== undefined && !admin) throw new AppError('RoleNotAssignable', 'only administrators assign roles');
    const roles = input.roleId === undefined ? [levelRoles(this.config.section(TenancySection).tenancy, atRoot).user] : this.checkRoles(actor!, store, input.roleId);
    const { roleId: _roleId, ...profile } = input;
    // An administrator's creation, or a public registration (nobody logged in, or a plain user).
    const by = actor ? auditActor(actor) : { type: 'anonymous' as const, id: null };
    return this.users.create({ storeId: store.id, roles, ownerId: actor?.userId }, profile, origin, store, (user, tx) =>
      this.audit.record({ storeId: store.id, action: 'user.created', outcome: 'success', actor: by, target: { type: 'user', id: user.id }, details: { via: admin ? 'admin' : 'registration', roles } }, context, tx),
    );
  }

  list(store: Tenant, query: UserListQuery): Promise<[UserEntity[], number, PageRequest]> {
    const page = pageRequest(query, this.config.section(PagingSection).paging);
    return this.users.list(store.id, page, query.search).then(([rows, total]) => [rows, total, page]);
  }

  async get(actor: SessionData, store: Tenant, id: string): Promise<UserEntity> {
    const user = await this.visible(store, id);
    if (user.id !== actor.userId && !hasAdminRole(actor.roles)) throw new AppError('Forbidden', 'you may read only your own profile');
    return user;
  }

  async update(actor: SessionData, store: Tenant, id: string, input: UpdateUserInput, origin: string, context: AuditContext = {}): Promise<UserEntity> {
    const user = await this.visible(store, id);
    const before = { isActive: user.isActive, roles: [...user.roles] };
    const self = user.id === actor.userId;
    const admin = hasAdminRole(actor.roles);
    if (!self && !admin) throw new AppError('Forbidden', 'you may change only your own profile');
    if (!self) this.assertOutranks(actor, user);
    if ((input.roleId !== undefined || input.isActive !== undefined) && !(admin && !self)) {
      throw new AppError('RoleNotAssignable', 'roles and flags are changed by an administrator, not on your own profile');
    }
    const changes: Partial<UserEntity> & { password?: NewPassword } = { ...this.nameChanges(input, user), customData: { ...user.customData, ...pickCustomData(input, this.config.section(CustomPropertiesSection).customUserProperties) } };
    if (input.avatar !== undefined) changes.avatar = input.avatar ?? this.users.generatedAvatar(origin);
    if (input.language !== undefined) changes.language = input.language;
    if (input.roleId !== undefined) changes.roles = this.checkRoles(actor, store, input.roleId);
    if (input.isActive !== undefined) changes.isActive = input.isActive;
    if (input.password !== undefined) {
      // A leaked key must not be able to take the account over.
      if (actor.principal === 'apiKey') throw new AppError('PrincipalNotAccepted', 'passwords are changed with a login, not an API key');
      if (self && !(input.currentPassword && (await this.passwords.verify(input.currentPassword, user.passwordHash)))) {
        throw new AppError('WrongCurrentPassword', 'currentPassword is missing or wrong');
      }
      changes.password = { value: input.password, user, store };
    }
    const by = auditActor(actor);
    // The names of the fields sent, never their values; one's own new password is its own entry.
    const fields = Object.keys(input).filter((k) => k !== 'currentPassword' && (input as Record<string, unknown>)[k] !== undefined && !(self && k === 'password'));
    const entries: AuditInput[] = [];
    const entry = (action: AuditAction, details?: Record<string, unknown>) => entries.push({ storeId: store.id, action, outcome: 'success', actor: by, target: { type: 'user', id }, details });
    if (fields.length) entry('user.updated', { fields });
    if (self && input.password !== undefined) entry('user.password.changed');
    if (input.isActive === false && before.isActive) entry('user.deactivated');
    if (changes.roles && !sameRoles(before.roles, changes.roles)) entry('user.role.changed', { from: before.roles, to: changes.roles });
    // The change, its entries and its event in one transaction.
    const updated = (await this.users.update(store.id, id, changes, async (_user, tx) => {
      for (const e of entries) await this.audit.record(e, context, tx);
      // Once committed, before the event is delivered (its listeners check open streams again):
      // a new password or a deactivation ends the user's other sessions, other changes only make
      // cached sessions stale; keys act for their owner, so a deactivation or a role change
      // reaches them at once.
      afterCommit(tx, async () => {
        if (input.password !== undefined || input.isActive === false) {
          await this.sessions.end(store.id, { userId: id, exceptId: self ? actor.sessionId : undefined });
        } else {
          await this.sessions.forgetCached(store.id, id);
        }
        if (input.isActive === false || input.roleId !== undefined) await this.apiKeys.forgetOwner(store.id, id);
      });
      await this.events.emit('user.updated', { userId: id, storeId: store.id }, tx);
    }))!;
    // The replaced avatar's file goes when the user uploaded it.
    if (input.avatar !== undefined && user.avatar !== updated.avatar) await this.bucket.discard(store.id, id, user.avatar);
    return updated;
  }

  async delete(actor: SessionData, store: Tenant, id: string, context: AuditContext = {}): Promise<void> {
    const user = await this.visible(store, id);
    if (user.id === actor.userId) throw new AppError('Forbidden', 'you cannot delete yourself');
    if (store.ownerId === user.id) throw new AppError('Forbidden', 'the store owner cannot be deleted');
    this.assertOutranks(actor, user);
    await this.sessions.end(store.id, { userId: id });
    await this.apiKeys.forgetOwner(store.id, id); // the rows go with the user; their cached sessions go now
    await this.bucket.discardAll(store.id, id);
    await this.users.delete(store.id, id, async (_user, tx) => {
      await this.audit.record({ storeId: store.id, action: 'user.deleted', outcome: 'success', actor: auditActor(actor), target: { type: 'user', id } }, context, tx);
      await this.events.emit('user.deleted', { userId: id, storeId: store.id, ownerId: user.ownerId }, tx);
    });
  }

  // A user's live sessions (its devices), for whoever manages its profile: itself, or an admin
  // of its store who outranks it.
  async listSessions(actor: SessionData, store: Tenant, id: string, query: PageQuery): Promise<[SessionEntity[], number, PageRequest]> {
    const user = await this.manageable(actor, store, id);
    return this.sessions.list(store.id, user.id, query);
  }

  // Ends every session of the user; the caller's own login stays when it ends its own others.
  async endSessions(actor: SessionData, store: Tenant, id: string, context: AuditContext = {}): Promise<number> {
    const user = await this.manageable(actor, store, id);
    const self = user.id === actor.userId && actor.principal !== 'apiKey';
    return this.sessions.end(store.id, { userId: user.id, exceptId: self ? actor.sessionId : undefined }, (count, tx) =>
      this.audit.record({ storeId: store.id, action: 'session.ended', outcome: 'success', actor: auditActor(actor), target: { type: 'user', id: user.id }, details: { count } }, context, tx),
    );
  }

  // Removes the user's app factors (authenticator app, recovery codes, passkeys) and ends its
  // sessions: for a user who lost its device. Never one's own: that goes through a current code
  // or the password (DELETE /auth-api/mfa/totp).
  async resetFactors(actor: SessionData, store: Tenant, id: string, context: AuditContext = {}): Promise<number> {
    const user = await this.manageable(actor, store, id);
    if (user.id === actor.userId) throw new AppError('Forbidden', 'your own factors are removed with a current code or your password (DELETE /auth-api/mfa/totp)');
    // The factors go with their entry and event, in one transaction; the sessions end after it,
    // before the event is delivered.
    return this.mfa.reset(store.id, user.id, async (tx) => {
      await this.audit.record({ storeId: store.id, action: 'user.factor.removed', outcome: 'success', actor: auditActor(actor), target: { type: 'user', id: user.id }, details: { factor: 'all' } }, context, tx);
      await this.events.emit('user.updated', { userId: user.id, storeId: store.id }, tx);
    });
  }

  private async manageable(actor: SessionData, store: Tenant, id: string): Promise<UserEntity> {
    const user = await this.visible(store, id);
    if (!mayManage(actor, user)) throw new AppError('Forbidden', "a user's sessions are managed only by itself or an administrator who outranks it");
    return user;
  }

  private async visible(store: Tenant, id: string): Promise<UserEntity> {
    const user = await this.users.findById(store.id, id);
    if (!user) throw new AppError('UserNotFound', 'no such user in this store');
    return user;
  }

  // Roles a caller may grant in this store: the level's admin and user roles and custom roles;
  // owner and super administrator roles only by a super administrator.
  private checkRoles(actor: SessionData, store: Tenant, roleId: unknown): string[] {
    const roles = Array.isArray(roleId) ? roleId : [roleId];
    // A number names a number custom role (compared as given); users hold its text form.
    if (!roles.length || roles.some((r) => typeof r !== 'string' && typeof r !== 'number')) throw new AppError('ValidationFailed', 'roleId must be a role value or an array of them');
    if (roles.length > 1 && !this.config.section(TenancySection).usersHaveMultipleRoles) throw new AppError('ValidationFailed', 'roleId must be a single role');
    const superAdmin = actor.roles.includes(SAAS_ROLES.superAdmin);
    const level = levelRoles(this.config.section(TenancySection).tenancy, store.codename === ROOT_CODENAME);
    const allowed = new Set([level.admin, level.user, ...(superAdmin ? [level.top] : []), ...this.config.section(TenancySection).customRoles.map((r) => r.value)]);
    const refused = (roles as (string | number)[]).filter((r) => !allowed.has(r));
    if (refused.length) throw new AppError('RoleNotAssignable', `role ${refused[0]} cannot be assigned here`);
    return [...new Set(roles.map(String))];
  }

  private assertOutranks(actor: SessionData, target: UserEntity): void {
    if (!outranks(actor.roles, target.roles)) throw new AppError('Forbidden', 'this user is changed only by a super administrator');
  }

  private nameChanges(input: UpdateUserInput, user: UserEntity): Partial<UserEntity> {
    const namePair = this.config.section(UserSection).userNameType === 'asNamePair';
    if (namePair && input.fullname !== undefined) throw new AppError('UnknownField', 'property fullname is not accepted: send name and surname');
    if (!namePair && (input.name !== undefined || input.surname !== undefined)) throw new AppError('UnknownField', 'property name/surname is not accepted: send fullname');
    if (namePair && (input.name !== undefined || input.surname !== undefined)) {
      const name = input.name ?? user.name;
      const surname = input.surname ?? user.surname;
      return { name, surname, fullname: `${name} ${surname}` };
    }
    return input.fullname !== undefined ? { fullname: input.fullname } : {};
  }
}

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((r) => b.includes(r));
}
