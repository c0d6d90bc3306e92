import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { AvatarService } from '../avatar/avatar.service.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { ConfigError } from '../../platform/config/env.js';
import { Transactions } from '../../platform/database/transactions.js';
import { ROOT_CODENAME } from '../../kernel/tenant.js';
import { StoreService } from '../store/store.service.js';
import { looksLikeMobile, normalizeMobile } from '../user/mobile.js';
import { checkPasswordPolicy, PasswordHasher } from '../user/password.js';
import { SAAS_ROLES, TENANT_ROLES } from '../../kernel/roles.js';
import { SYSTEM_USER_FIELDS } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { SeedSection } from './seed.settings.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';
import { UserSection } from '../user/user.settings.js';

export const DEFAULT_SUPER_ADMIN_EMAIL = 'admin@example.com';
export const DEFAULT_SUPER_ADMIN_PASSWORD = 'superadmin-change-me';
// Placeholders for identifiers the settings require but the configuration does not give;
// replaced by the administrator after the first login.
export const PLACEHOLDER_MOBILE = '+12015550123';
export const PLACEHOLDER_EMAIL = 'superadmin@placeholder.invalid';

const SEED_LOCK = 7_311_002;

interface AdminIdentity {
  email: string | null;
  mobile: string | null;
}

// Creates, once, what a deployment starts with: the root store, the super administrator and (not
// in a single-tenant deployment) a sample store whose owner logs in like the super administrator.
// Safe when replicas boot together.
@Injectable()
export class SeedService implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    private readonly transactions: Transactions,
    private readonly stores: StoreService,
    private readonly users: UserService,
    private readonly passwords: PasswordHasher,
    private readonly avatars: AvatarService,
    private readonly config: AppConfig,
    private readonly logger: PinoLogger,
    private readonly checks: BootChecks,
  ) {
    logger.setContext(SeedService.name);
  }

  // The administrator's identifier, password and data are checked at init with every module's
  // settings (BootChecks), so a refused boot writes nothing.
  onModuleInit(): void {
    this.checks.collect(() => this.adminIdentity());
    this.checks.collect(() => this.adminPassword());
    this.checks.collect(() => this.superAdminData());
  }

  async onApplicationBootstrap(): Promise<void> {
    const identity = this.adminIdentity();
    const password = this.adminPassword();
    if (!this.config.env.SUPER_ADMIN_PASSWORD) this.logger.warn('SUPER_ADMIN_PASSWORD is not set: the super administrator has the documented default password');
    await this.transactions.exclusive(SEED_LOCK, async (tx) => {
      const root =
        (await this.stores.findByCodename(ROOT_CODENAME, tx)) ??
        (await this.stores.insertSeeded({ codename: ROOT_CODENAME, name: 'Root', fullname: 'SaaS level' }, null, tx));
      let admin = await this.users.findByRole(root.id, SAAS_ROLES.superAdmin, tx);
      if (!admin) {
        const fields = { ...identity, ...this.names(), passwordHash: await this.passwords.hashUnchosen(password), customData: this.superAdminData() };
        admin = await this.users.insert({ storeId: root.id, roles: [SAAS_ROLES.superAdmin] }, this.withAvatar(fields), tx);
        this.logger.info({ userId: admin.id }, 'super administrator created');
      }
      // A single-tenant deployment is one organisation: no sample store beside it.
      const sample = this.config.section(SeedSection).sampleStore;
      const withSample = sample.enabled && this.config.section(TenancySection).tenancy === 'multi';
      if (withSample && !(await this.stores.findByCodename(sample.codename, tx))) {
        const ownerId = randomUUID();
        const store = await this.stores.insertSeeded(sample, ownerId, tx);
        const fields = { email: admin.email, mobile: admin.mobile, ...this.names(), passwordHash: admin.passwordHash, customData: {} };
        await this.users.insert({ id: ownerId, storeId: store.id, roles: [TENANT_ROLES.tenantOwner] }, this.withAvatar(fields), tx);
        this.logger.info({ storeId: store.id }, 'sample store created');
      }
    });
  }

  private adminPassword(): string {
    const password = this.config.env.SUPER_ADMIN_PASSWORD ?? DEFAULT_SUPER_ADMIN_PASSWORD;
    if (!this.config.env.SUPER_ADMIN_PASSWORD && this.config.env.NODE_ENV === 'production') throw new ConfigError(['SUPER_ADMIN_PASSWORD must be set in production']);
    try {
      checkPasswordPolicy(password);
    } catch (error) {
      throw new ConfigError([`SUPER_ADMIN_PASSWORD: ${(error as Error).message}`]);
    }
    return password;
  }

  private names() {
    const namePair = this.config.section(UserSection).userNameType === 'asNamePair';
    return { fullname: 'Super Admin', name: namePair ? 'Super' : null, surname: namePair ? 'Admin' : null };
  }

  private withAvatar<T extends object>(fields: T): T & { avatar: string } {
    return { ...fields, avatar: this.avatars.generate() };
  }

  // The spec's rules: the identifier goes in the primary column; a mobile primary with the
  // default identifier gets a placeholder number; a required secondary gets a placeholder.
  private adminIdentity(): AdminIdentity {
    const s = this.config.section(UserSection);
    const given = this.config.env.SUPER_ADMIN_IDENTIFIER;
    const identifier = given ?? DEFAULT_SUPER_ADMIN_EMAIL;
    const asMobile = (value: string) => {
      try {
        return normalizeMobile(value, s.defaultMobileRegion, 'SUPER_ADMIN_IDENTIFIER');
      } catch {
        throw new ConfigError([`SUPER_ADMIN_IDENTIFIER=${JSON.stringify(value)}: must be a mobile number (E.164) when mobile is the primary identifier`]);
      }
    };
    const asEmail = (value: string) => {
      if (!/^[^\s@]+@[^\s@]+$/.test(value)) throw new ConfigError([`SUPER_ADMIN_IDENTIFIER=${JSON.stringify(value)}: must be an email address`]);
      return value.toLowerCase();
    };
    const requiredSecondary = s.secondaryIdentifierPresence === 'required';
    switch (s.primaryLoginIdentifier) {
      case 'email':
        return { email: asEmail(identifier), mobile: requiredSecondary ? PLACEHOLDER_MOBILE : null };
      case 'mobile':
        return { email: requiredSecondary ? PLACEHOLDER_EMAIL : null, mobile: given ? asMobile(given) : PLACEHOLDER_MOBILE };
      case 'emailOrMobile': {
        const isMobile = looksLikeMobile(identifier);
        const both = s.dualIdentifierRegistration === 'both';
        return isMobile
          ? { email: both ? PLACEHOLDER_EMAIL : null, mobile: asMobile(identifier) }
          : { email: asEmail(identifier), mobile: both ? PLACEHOLDER_MOBILE : null };
      }
    }
  }

  private superAdminData(): Record<string, unknown> {
    const data = this.config.section(SeedSection).superAdminData;
    const clashes = data.filter((d) => SYSTEM_USER_FIELDS.has(d.name)).map((d) => `settings.superAdminData: "${d.name}" collides with a system field`);
    if (clashes.length) throw new ConfigError(clashes);
    return Object.fromEntries(data.map((d) => [d.name, d.value]));
  }
}
