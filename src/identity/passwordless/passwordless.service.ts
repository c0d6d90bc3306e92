import { randomBytes } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AuditLog, type AuditContext } from '../../kernel/audit.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import { AppError } from '../../kernel/errors.js';
import type { SessionMeta } from '../../kernel/principal.js';
import { RateLimits } from '../../kernel/rate-limit/rate-limit.js';
import { levelRoles } from '../../kernel/roles.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { Transactions } from '../../platform/database/transactions.js';
import { EvenTiming } from '../../platform/clock/even-timing.js';
import type { PasswordlessChannel, PasswordlessLoginSettings } from './passwordless.settings.js';
import { NotificationService } from '../../delivery/notification/notification.service.js';
import { AuthService, type LoginResult } from '../auth/auth.service.js';
import type { UserEntity } from '../user/index.js';
import { PasswordHasher } from '../user/password.js';
import { UserService } from '../user/user.service.js';
import { VerificationCodes, type IssuedSecrets, type SpentCode } from '../verification/verification-codes.service.js';
import { toStartAnswer, type PasswordlessAddressInput, type PasswordlessCompleteInput, type PasswordlessStartAnswer, type PasswordlessStartInput } from './passwordless.dto.js';
import { PASSWORDLESS_TEMPLATES, PASSWORDLESS_TEMPLATES_BY_CHANNEL } from './passwordless-templates.js';
import { PasswordlessSection } from './passwordless.settings.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';
import { VerificationSection } from '../verification/verification.settings.js';
import { linkBase } from '../verification/frontend-url.js';

// Per channel: the address it proves and the flow its codes are stored under.
const CHANNELS = {
  email: { identifier: 'email', purpose: 'passwordless-login-by-email' },
  sms: { identifier: 'mobile', purpose: 'passwordless-login-by-mobile' },
} as const satisfies Record<PasswordlessChannel, { identifier: 'email' | 'mobile'; purpose: string }>;

interface Address {
  channel: PasswordlessChannel;
  identifier: 'email' | 'mobile';
  purpose: string;
  // As stored: lower-case email, E.164 mobile.
  subject: string;
}

// Sign-in by a one-time code or link sent to an email or mobile, on the verification codes
// (VerificationCodes: keyed hashes, single use, 5 tries, expiry); the session is a login's
// (AuthService.loginVerified: the same checks, second factors and answer as /login).
@Injectable()
export class PasswordlessService implements OnModuleInit {
  // How long handing a message to the notification module takes per channel: a start that sends
  // nothing (unknown address, sign-up off) waits as long, so timing tells nothing.
  private readonly sending = new EvenTiming<PasswordlessChannel>();

  constructor(
    private readonly codes: VerificationCodes,
    private readonly auth: AuthService,
    private readonly users: UserService,
    private readonly passwords: PasswordHasher,
    private readonly notifications: NotificationService,
    private readonly limits: RateLimits,
    private readonly events: DomainEvents,
    private readonly audit: AuditLog,
    private readonly config: AppConfig,
    private readonly checks: BootChecks,
    private readonly transactions: Transactions,
  ) {}

  // Shipped templates, then the settings the feature depends on: one that cannot work stops the
  // boot, named.
  onModuleInit(): void {
    this.notifications.addDefaultTemplates(PASSWORDLESS_TEMPLATES);
    const p = this.config.section(PasswordlessSection).passwordlessLogin;
    if (!p.enabled) return;
    const problems: string[] = [];
    const live = this.config.section(VerificationSection).verification.verificationMode === 'liveMode';
    for (const channel of p.channels) {
      const { identifier } = CHANNELS[channel];
      if (this.users.presence[identifier] === 'absent') problems.push(`settings.passwordlessLogin.channels: users have no ${identifier} for ${channel} (see primaryLoginIdentifier, secondaryIdentifierPresence)`);
      if (live && !this.notifications.hasChannel(channel)) problems.push(`settings.passwordlessLogin.channels: liveMode needs the notification channel ${channel}`);
      const other = identifier === 'email' ? 'mobile' : 'email';
      if (p.allowSignUp && this.users.presence[other] === 'required') problems.push(`settings.passwordlessLogin.allowSignUp: a sign-up by ${identifier} cannot give the required ${other}`);
    }
    this.checks.report(problems);
  }

  // Sends a code and/or link to the address. Known, unknown and deactivated addresses get the
  // same answer, timing included; only an active user's address (or, with allowSignUp, one
  // without an account) receives a code that can work.
  async start(store: Tenant, input: PasswordlessStartInput, meta: SessionMeta, acceptLanguage?: string): Promise<PasswordlessStartAnswer> {
    const settings = this.settings();
    const address = this.address(settings, input);
    // Refused before anything counts, is stored or is sent, whatever the address.
    const frontendUrl = linkBase(this.config.section(VerificationSection).verification, input.frontendUrl);
    if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);
    await this.limits.consume('passwordlessPerIp', meta.ip ?? 'unknown');
    await this.limits.consume('passwordlessPerAddress', this.addressKey(store, address));

    const found = await this.users.findByIdentifier(store.id, address.identifier, address.subject);
    const user = found?.isActive ? found : null;
    const live = !!user || (!found && this.signUpAllowed(store, settings));
    const issued = await this.codes.issue(store.id, {
      purpose: address.purpose,
      subject: address.subject,
      userId: user?.id ?? null,
      live,
      code: settings.verificationType !== 'byLink',
      link: settings.verificationType !== 'byCode',
      expireSeconds: settings.expireTimeWindow,
      resendSeconds: settings.resendTimeWindow,
    });

    if (live) await this.sending.work(address.channel, () => this.deliver(store, address, user, issued, settings, frontendUrl, acceptLanguage));
    else await this.sending.wait(address.channel);
    const testMode = this.config.section(VerificationSection).verification.verificationMode === 'testMode';
    return toStartAnswer(issued, settings.expireTimeWindow, settings.verificationType, testMode);
  }

  // Spends the code or link and signs in: the address's user, or (allowSignUp) a new one. Every
  // refusal after the input's shape is recorded (user.login.failed with its reason).
  async complete(store: Tenant, input: PasswordlessCompleteInput, meta: SessionMeta, context: AuditContext, origin: string): Promise<LoginResult> {
    const settings = this.settings();
    const byToken = input.token !== undefined;
    if (byToken && (input.secretCode !== undefined || input.email !== undefined || input.mobile !== undefined)) {
      throw new AppError('ValidationFailed', 'send either token alone, or email or mobile with secretCode');
    }
    if (!byToken && input.secretCode === undefined) throw new AppError('ValidationFailed', 'secretCode (with email or mobile) or token is required');
    const address = byToken ? undefined : this.address(settings, input);
    let userId: string | null = null;
    try {
      if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);
      await this.limits.consume('passwordlessPerIp', meta.ip ?? 'unknown');
      let spent: SpentCode;
      if (address) {
        await this.limits.consume('passwordlessPerAddress', this.addressKey(store, address));
        // Only a code sent as one is compared (a byLink start sends none).
        if (settings.verificationType === 'byLink') throw invalidCode();
        spent = await this.codes.spendCode(store.id, address.purpose, address.subject, input.secretCode!);
      } else {
        if (settings.verificationType === 'byCode') throw invalidCode();
        // Among the enabled channels only: a link of a channel turned off since is refused.
        const purposes = settings.channels.map((c) => CHANNELS[c].purpose);
        spent = await this.codes.spendLink(store.id, purposes, input.token!);
      }
      const channel = spent.purpose === CHANNELS.sms.purpose ? 'sms' : 'email';
      const spentAddress: Address = { channel, ...CHANNELS[channel], subject: spent.subject };
      userId = spent.userId;
      const user = await this.userOf(store, spentAddress, spent, settings, origin, context);
      userId = user.id;
      const verified = await this.markVerified(store, spentAddress, user);
      const result = await this.auth.loginVerified(store, verified, meta, { amr: [channel === 'sms' ? 'sms' : 'email'], method: 'passwordless', context });
      await this.limits.reset('passwordlessPerAddress', this.addressKey(store, spentAddress));
      return result;
    } catch (error) {
      const reason = failureReason(error);
      if (reason) this.auth.recordLoginFailure(store, address?.subject ?? null, userId, reason, context);
      throw error;
    }
  }

  // The code's user: still holding the address the code was sent to. Or, for a code issued for
  // an address without an account, a new user (allowSignUp).
  private async userOf(store: Tenant, address: Address, spent: SpentCode, settings: PasswordlessLoginSettings, origin: string, context: AuditContext): Promise<UserEntity> {
    if (spent.userId) {
      const user = await this.users.findById(store.id, spent.userId);
      // The address may have changed since the code was sent: the code proved the old one.
      if (!user || user[address.identifier] !== address.subject) throw invalidCode();
      return user;
    }
    if (!this.signUpAllowed(store, settings)) throw invalidCode();
    // Registered in between by other means: the code proved the same address.
    return (await this.users.findByIdentifier(store.id, address.identifier, address.subject)) ?? this.signUp(store, address, origin, context);
  }

  // A store user with the proven address and no password anyone knows (a password reset sets
  // one); named after the address until the user changes it.
  private async signUp(store: Tenant, address: Address, origin: string, context: AuditContext): Promise<UserEntity> {
    const roles = [levelRoles(this.config.section(TenancySection).tenancy, store.codename === ROOT_CODENAME).user];
    const name = address.identifier === 'email' ? address.subject.split('@')[0] : address.subject;
    const namePair = this.users.view.namePair;
    // Nobody chose this password: an account signed up without one sets it by a reset.
    const passwordHash = await this.passwords.hashUnchosen(randomBytes(32).toString('base64url'));
    let user: UserEntity;
    try {
      // The user, its entry and its event in one transaction.
      user = await this.transactions.run(async (tx) => {
        const created = await this.users.insert(
          { storeId: store.id, roles },
          {
            email: address.identifier === 'email' ? address.subject : null,
            mobile: address.identifier === 'mobile' ? address.subject : null,
            fullname: name,
            name: namePair ? name : null,
            surname: null,
            passwordHash,
            avatar: this.users.generatedAvatar(origin),
            customData: {},
            ...(address.identifier === 'email' ? { emailVerified: true } : { mobileVerified: true }),
          },
          tx,
        );
        await this.audit.record(
          { storeId: store.id, action: 'user.created', outcome: 'success', actor: { type: 'anonymous', id: null }, target: { type: 'user', id: created.id }, details: { via: 'passwordless' } },
          context,
          tx,
        );
        await this.events.emit('user.created', { userId: created.id, storeId: store.id }, tx);
        return created;
      });
    } catch (error) {
      // The same address signing up twice at once: the other one won.
      const existing = await this.users.findByIdentifier(store.id, address.identifier, address.subject);
      if (!existing) throw error;
      return existing;
    }
    return user;
  }

  // Receiving the code proved the address.
  private async markVerified(store: Tenant, address: Address, user: UserEntity): Promise<UserEntity> {
    const already = address.identifier === 'email' ? user.emailVerified : user.mobileVerified;
    if (already) return user;
    const updated = await this.users.update(store.id, user.id, address.identifier === 'email' ? { emailVerified: true } : { mobileVerified: true }, (_user, tx) =>
      this.events.emit('user.updated', { userId: user.id, storeId: store.id }, tx),
    );
    if (!updated) throw invalidCode(); // deleted meanwhile
    return updated;
  }

  private async deliver(store: Tenant, address: Address, user: UserEntity | null, issued: IssuedSecrets, settings: PasswordlessLoginSettings, frontendUrl: string, acceptLanguage?: string): Promise<void> {
    // testMode without the channel: the answer carries the code.
    if (!this.notifications.hasChannel(address.channel)) return;
    const link = issued.token && `${frontendUrl}/passwordlessLogin/${issued.token}`;
    await this.notifications.send({
      storeId: store.id,
      channel: address.channel,
      template: PASSWORDLESS_TEMPLATES_BY_CHANNEL[address.channel],
      // An address signing up has no user yet.
      ...(user ? { userId: user.id } : { recipient: address.subject }),
      contextVars: { expireMinutes: Math.ceil(settings.expireTimeWindow / 60) },
      // Kept only until delivered; never in a queue job or a log.
      secretVars: { ...(issued.code && { code: issued.code }), ...(link && { link }) },
      acceptLanguage,
    });
  }

  private settings(): PasswordlessLoginSettings {
    const settings = this.config.section(PasswordlessSection).passwordlessLogin;
    if (!settings.enabled) throw new AppError('PasswordlessLoginDisabled', 'passwordless sign-in is not enabled');
    return settings;
  }

  // Exactly one address, of an enabled channel, in its stored form.
  private address(settings: PasswordlessLoginSettings, input: PasswordlessAddressInput): Address {
    if ((input.email === undefined) === (input.mobile === undefined)) throw new AppError('ValidationFailed', 'send either email or mobile');
    const channel: PasswordlessChannel = input.email !== undefined ? 'email' : 'sms';
    if (!settings.channels.includes(channel)) throw new AppError('PasswordlessChannelDisabled', `passwordless sign-in by ${CHANNELS[channel].identifier} is not enabled`);
    const { identifier, purpose } = CHANNELS[channel];
    return { channel, identifier, purpose, subject: this.users.normalizeIdentifier(identifier, input[identifier]!) };
  }

  private addressKey(store: Tenant, address: Address): string {
    return `${store.id}:${address.identifier}:${address.subject}`;
  }

  // A single-tenant deployment's users live in the root store; otherwise the root store holds
  // only the service's own accounts, which nobody signs up for.
  private signUpAllowed(store: Tenant, settings: PasswordlessLoginSettings): boolean {
    return settings.allowSignUp && (store.codename !== ROOT_CODENAME || this.config.section(TenancySection).tenancy === 'single');
  }
}

function invalidCode(): AppError {
  return new AppError('VerificationCodeInvalid', 'the code is not valid');
}

// The audit reason of a refused completion; undefined for a server fault (not a refused login).
function failureReason(error: unknown): string | undefined {
  if (!(error instanceof AppError)) return undefined;
  const reasons: Partial<Record<string, string>> = {
    VerificationCodeInvalid: 'wrong_code',
    VerificationCodeExpired: 'expired',
    VerificationAttemptsExceeded: 'attempts_exceeded',
    TooManyRequests: 'rate_limited',
    UserInactive: 'inactive',
    EmailVerificationNeeded: 'not_verified',
    MobileVerificationNeeded: 'not_verified',
    StoreInactive: 'store_inactive',
  };
  if (error.errCode === 'ServiceUnavailable') return undefined;
  return reasons[error.errCode] ?? 'error';
}
