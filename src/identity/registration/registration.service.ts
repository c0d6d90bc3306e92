import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AuditLog, type AuditContext, type AuditInput } from '../../kernel/audit.js';
import { declareCustomProperties, pickCustomData } from '../../kernel/custom-properties.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import { SocialService } from '../social/social.service.js';
import { StoreInput } from '../store/index.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { StoreService } from '../store/store.service.js';
import { levelRoles, TENANT_ROLES } from '../../kernel/roles.js';
import type { UserProfileInput, UserEntity } from '../user/index.js';
import { UserService, type StoreNamed } from '../user/user.service.js';
import type { RegisterStoreOwnerInput, RegisterStoreUserInput } from './registration.dto.js';
import { CustomPropertiesSection } from '../../kernel/custom-properties.settings.js';
import { RegistrationSection } from './registration.settings.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

const SYSTEM_STORE_FIELDS: ReadonlySet<string> = new Set([
  'id', 'name', 'codename', 'fullname', 'avatar', 'isActive', 'ownerId', 'storeId', 'customData', 'recordVersion', 'createdAt', 'updatedAt', '_owner',
]);
// Two owners registering stores of the same name at once may both pick the same free codename;
// the loser retries with the next one.
const CODENAME_ATTEMPTS = 5;

@Injectable()
export class RegistrationService implements OnModuleInit {
  constructor(
    private readonly transactions: Transactions,
    private readonly stores: StoreService,
    private readonly users: UserService,
    private readonly events: DomainEvents,
    private readonly social: SocialService,
    private readonly config: AppConfig,
    private readonly checks: BootChecks,
    private readonly audit: AuditLog,
  ) {}

  onModuleInit(): void {
    this.checks.collect(() => declareCustomProperties(StoreInput, this.config.section(CustomPropertiesSection).customStoreProperties, SYSTEM_STORE_FIELDS, 'customStoreProperties'));
  }

  // A new store and its owner, in one transaction with their audit entries (store.created, by the
  // new owner, in the new store's log) and their events. `origin`: the request's (generated avatars).
  async registerStoreOwner(target: Tenant, input: RegisterStoreOwnerInput, origin: string, context: AuditContext = {}): Promise<{ user: UserEntity; store: Tenant }> {
    if (target.codename !== ROOT_CODENAME) throw new AppError('RootLevelOnly', 'store owners register at the root level');
    if (!this.config.section(RegistrationSection).tenantRegisterIsPublic) throw new AppError('TenantRegisterNotPublic');

    const prepared = input.socialCode ? undefined : await this.users.prepare(input, origin, input.store);
    await this.checkSocialPassword(input, input.store);
    const storeData = pickCustomData(input.store, this.config.section(CustomPropertiesSection).customStoreProperties);
    for (let attempt = 1; ; attempt++) {
      const ownerId = randomUUID();
      try {
        return await this.transactions.run(async (tx) => {
          const social = await this.withSocialProfile(target.id, input, tx, origin, input.store);
          const store = await this.stores.create(input.store, storeData, ownerId, tx, origin);
          const user = await this.users.insert({ id: ownerId, storeId: store.id, roles: [TENANT_ROLES.tenantOwner] }, social?.prepared ?? prepared!, tx);
          await social?.link(store.id, user.id, tx, context);
          await this.audit.record(
            {
              storeId: store.id,
              action: 'store.created',
              outcome: 'success',
              actor: { type: 'user', id: user.id, roleId: TENANT_ROLES.tenantOwner },
              target: { type: 'store', id: store.id },
              details: { codename: store.codename, name: store.name, social: !!social },
            },
            context,
            tx,
          );
          await this.audit.record(createdEntry(store.id, user.id, 'storeOwner'), context, tx);
          await this.events.emit('store.created', { storeId: store.id, ownerId }, tx);
          await this.events.emit('user.created', { userId: ownerId, storeId: store.id }, tx);
          return { store, user };
        });
      } catch (error) {
        if (attempt < CODENAME_ATTEMPTS && isCodenameConflict(error)) continue;
        throw error;
      }
    }
  }

  // A user registering itself in a store; `context`: the request's address and agent, which its
  // audit entries carry (the only trace of who registered: the actor is anonymous).
  async registerStoreUser(target: Tenant, input: RegisterStoreUserInput, origin: string, context: AuditContext = {}): Promise<UserEntity> {
    // A single-tenant deployment registers its users in its one organisation, the root store.
    const single = this.config.section(TenancySection).tenancy === 'single';
    if (target.codename === ROOT_CODENAME && !single) throw new AppError('StoreLevelOnly', 'users register in a store: target one with svc-store-codename');
    if (!target.isActive) throw new AppError('StoreInactive', `store "${target.codename}" is not active`);
    const roles = [levelRoles(this.config.section(TenancySection).tenancy, target.codename === ROOT_CODENAME).user];
    if (!input.socialCode) {
      // The user, its audit entry and its event stand or fall together.
      return this.users.create({ storeId: target.id, roles }, input, origin, target, (user, tx) => this.audit.record(createdEntry(target.id, user.id, 'registration'), context, tx));
    }
    await this.checkSocialPassword(input, target);
    const user = await this.transactions.run(async (tx) => {
      const social = (await this.withSocialProfile(target.id, input, tx, origin, target))!;
      const created = await this.users.insert({ storeId: target.id, roles }, social.prepared, tx);
      await social.link(target.id, created.id, tx, context);
      await this.audit.record(createdEntry(target.id, created.id, 'registration'), context, tx);
      await this.events.emit('user.created', { userId: created.id, storeId: created.storeId }, tx);
      return created;
    });
    return user;
  }

  // A password sent with a socialCode meets the policy, checked with the words the request sent,
  // before the transaction (a breach lookup is a network call: never inside one).
  private async checkSocialPassword(input: RegisterStoreUserInput, store: StoreNamed): Promise<void> {
    if (input.socialCode && input.password !== undefined) await this.users.checkNewPassword(input.password, store, input);
  }

  // A registration carrying a socialCode: the code is used up in the caller's transaction (a
  // refused registration keeps it), fields the person left out come from the provider, no
  // password is needed, and the email counts as verified only when the provider verified
  // that same address. A password sent was checked before the transaction (checkSocialPassword).
  private async withSocialProfile(storeId: string, input: RegisterStoreUserInput, tx: Tx, origin: string, store: StoreNamed) {
    if (!input.socialCode) return undefined;
    const { socialCode, ...fields } = input;
    const claimed = await this.social.claim(storeId, socialCode, tx);
    const p = claimed.profile;
    const view = this.users.view;
    const merged: UserProfileInput = {
      ...fields,
      ...(view.hasEmail && { email: fields.email ?? p.email }),
      ...(!view.namePair && { fullname: fields.fullname ?? p.fullname }),
      avatar: fields.avatar ?? p.avatar,
      // Unknown to anyone: the account signs in through its provider until a password reset.
      password: fields.password ?? randomBytes(32).toString('base64url'),
    };
    const prepared = await this.users.prepare(merged, origin, store, { passwordChecked: true });
    const emailVerified = !!p.email && p.emailVerified && prepared.email === p.email;
    return { prepared: { ...prepared, ...(emailVerified && { emailVerified }) }, link: claimed.link };
  }
}

// A registration: nobody was logged in; the new user is the target.
function createdEntry(storeId: string, userId: string, via: 'storeOwner' | 'registration'): AuditInput {
  return { storeId, action: 'user.created', outcome: 'success', actor: { type: 'anonymous', id: null }, target: { type: 'user', id: userId }, details: { via } };
}

function isCodenameConflict(error: unknown): boolean {
  const e = error as { driverError?: { code?: string; constraint?: string } };
  return e.driverError?.code === '23505' && e.driverError.constraint === 'stores_codename_key';
}
