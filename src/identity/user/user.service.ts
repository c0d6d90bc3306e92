import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AvatarService } from '../avatar/avatar.service.js';
import { declareCustomProperties, pickCustomData } from '../../kernel/custom-properties.js';
import { AppError } from '../../kernel/errors.js';
import type { PageRequest } from '../../kernel/paging.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import { checkIdentifiers, identifierPresence, type IdentifierPresence } from './identifier-rules.js';
import { normalizeMobile } from './mobile.js';
import { PasswordHasher } from './password.js';
import { SYSTEM_USER_FIELDS, toUserResponse, UserProfileInput, type UserView } from './user.dto.js';
import type { UserEntity } from './user.entity.js';
import { UserRepository } from './user.repository.js';
import { CustomPropertiesSection } from '../../kernel/custom-properties.settings.js';
import { UserSection } from './user.settings.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

// Written with a user's change, in its transaction (the change's audit entries).
export type WithChange = (user: UserEntity, tx: Tx) => Promise<unknown>;

export interface NewUser {
  storeId: string;
  roles: string[];
  // Chosen in advance when another row must point at the user (a store's owner).
  id?: string;
  // Who creates it; a self-registered user owns itself.
  ownerId?: string;
}

// The store a user is in or joins, as the password policy needs it (a Tenant fits).
export interface StoreNamed {
  name: string;
}

// A user's words a password must not lean on.
export type PasswordWords = Partial<Pick<UserEntity, 'email' | 'mobile' | 'fullname' | 'name' | 'surname'>>;

// A new password for `user` in `store` (the user's email and names, with the store's name,
// count as guessable words).
export interface NewPassword {
  value: string;
  user: PasswordWords;
  store: StoreNamed;
}

function passwordWords(user: PasswordWords): PasswordWords {
  const words: PasswordWords = {};
  for (const key of ['email', 'mobile', 'fullname', 'name', 'surname'] as const) if (user[key] !== undefined) words[key] = user[key];
  return words;
}

const UNIQUE_VIOLATION = '23505';

@Injectable()
export class UserService implements OnModuleInit {
  readonly presence: IdentifierPresence;
  readonly view: UserView;

  // Login's password-strength verdicts (passwordChangeRecommended), by stored hash and words.
  private readonly changeRecommended = new LRUCache<string, boolean>({ max: 10_000 });

  constructor(
    private readonly users: UserRepository,
    private readonly passwords: PasswordHasher,
    private readonly avatars: AvatarService,
    private readonly events: DomainEvents,
    private readonly config: AppConfig,
    private readonly checks: BootChecks,
    private readonly transactions: Transactions,
  ) {
    const s = { ...config.section(UserSection), ...config.section(TenancySection) };
    this.presence = identifierPresence(s);
    this.view = {
      hasEmail: this.presence.email !== 'absent',
      hasMobile: this.presence.mobile !== 'absent',
      namePair: s.userNameType === 'asNamePair',
      multipleRoles: s.usersHaveMultipleRoles,
      numberRoles: new Set(s.customRoles.filter((r) => typeof r.value === 'number').map((r) => String(r.value))),
    };
  }

  onModuleInit(): void {
    this.checks.collect(() => declareCustomProperties(UserProfileInput, this.config.section(CustomPropertiesSection).customUserProperties, SYSTEM_USER_FIELDS, 'customUserProperties'));
  }

  // Checks a registration against the settings and normalizes it, before any write. `origin`:
  // the request's (RequestContext.origin), for a generated avatar's link. `store`: the store the
  // user joins (its name is one of the password's guessable words); `passwordChecked`: the
  // caller checked the password against the policy already, or generated it (length rules only).
  async prepare(input: UserProfileInput, origin: string, store: StoreNamed, opts: { passwordChecked?: boolean } = {}): Promise<Omit<Partial<UserEntity>, 'storeId'>> {
    const s = this.config.section(UserSection);
    checkIdentifiers(this.presence, { email: input.email, mobile: input.mobile });
    const mobile = input.mobile == null ? null : normalizeMobile(input.mobile, s.defaultMobileRegion);
    const email = input.email ?? null;
    if (this.view.namePair) {
      if (input.fullname !== undefined) throw new AppError('UnknownField', 'property fullname is not accepted: send name and surname');
      if (!input.name) throw new AppError('ValidationFailed', 'name is required');
      if (!input.surname) throw new AppError('ValidationFailed', 'surname is required');
    } else {
      if (input.name !== undefined || input.surname !== undefined) {
        throw new AppError('UnknownField', `property ${input.name !== undefined ? 'name' : 'surname'} is not accepted: send fullname`);
      }
      if (!input.fullname) throw new AppError('ValidationFailed', 'fullname is required');
    }
    const names = { fullname: this.view.namePair ? `${input.name} ${input.surname}` : input.fullname!, name: input.name ?? null, surname: input.surname ?? null };
    const passwordHash = opts.passwordChecked
      ? await this.passwords.hashUnchosen(input.password)
      : await this.passwords.hash(input.password, { email, mobile, ...names, storeName: store.name });
    return {
      email,
      mobile,
      ...names,
      passwordHash,
      avatar: input.avatar ?? this.generatedAvatar(origin),
      customData: pickCustomData(input, this.config.section(CustomPropertiesSection).customUserProperties),
    };
  }

  // Inserts a prepared user; `user.created` is the caller's to emit in its transaction.
  async insert(target: NewUser, prepared: Omit<Partial<UserEntity>, 'storeId'>, tx?: Tx): Promise<UserEntity> {
    const id = target.id ?? randomUUID();
    try {
      return await this.users.insert(
        target.storeId,
        { ...prepared, id, roles: target.roles, ownerId: target.ownerId ?? id },
        tx,
      );
    } catch (error) {
      throw duplicateAsAppError(error) ?? error;
    }
  }

  // The user, its `user.created` event and `inTx` (what must be written with the change: its
  // audit entries) in one transaction.
  async create(target: NewUser, input: UserProfileInput, origin: string, store: StoreNamed, inTx?: WithChange): Promise<UserEntity> {
    const prepared = await this.prepare(input, origin, store);
    return this.transactions.run(async (tx) => {
      const user = await this.insert(target, prepared, tx);
      await inTx?.(user, tx);
      await this.events.emit('user.created', { userId: user.id, storeId: user.storeId }, tx);
      return user;
    });
  }

  // The avatar of a user who has not chosen one.
  generatedAvatar(origin: string): string {
    return this.avatars.generate(origin);
  }

  toResponse(user: UserEntity): Record<string, unknown> {
    return toUserResponse(user, this.view);
  }

  // Kept by the features that own the factors (authenticator app, passkeys); the caller drops
  // the user's cached sessions after it, so the MFA policy sees the change.
  setAppFactors(storeId: string, id: string, factors: { totpEnabled?: boolean; hasPasskey?: boolean }, tx?: Tx): Promise<void> {
    return this.users.setAppFactors(storeId, id, factors, tx);
  }

  findById(storeId: string, id: string): Promise<UserEntity | null> {
    return this.users.findById(storeId, id);
  }

  // Those of these users who are in the store, in one query (a group's members).
  findByIds(storeId: string, ids: readonly string[]): Promise<UserEntity[]> {
    return this.users.findByIds(storeId, ids);
  }

  list(storeId: string, page: PageRequest, search?: string): Promise<[UserEntity[], number]> {
    return this.users.list(storeId, page, search);
  }

  count(storeId: string): Promise<number> {
    return this.users.count(storeId);
  }

  // Applies checked changes; the password, when given, is checked against the policy (with the
  // user's words as they will be after the change) and hashed. The hash is made before the
  // transaction opens: it holds no connection while bcrypt works.
  async update(storeId: string, id: string, changes: Partial<UserEntity> & { password?: NewPassword }, inTx?: WithChange): Promise<UserEntity | null> {
    const { password, ...rest } = changes;
    if (password !== undefined) rest.passwordHash = await this.passwords.hash(password.value, { ...passwordWords(password.user), ...passwordWords(rest), storeName: password.store.name });
    return this.withChange((tx) => this.users.update(storeId, id, rest, tx), inTx);
  }

  // The policy's check of a new password for this user, without setting it (a reset checks it
  // before spending its code). `user` undefined: only what the caller already knows counts.
  checkNewPassword(password: string, store: StoreNamed, user: PasswordWords | undefined): Promise<void> {
    return this.passwords.check(password, { ...(user && passwordWords(user)), storeName: store.name });
  }

  // Whether a password just accepted at login misses today's length or strength rules. The
  // strength check runs on the event loop (5 ms for a passphrase, 24 ms for 72 random
  // characters), so its verdict is kept per stored hash and the words it weighed: the next login
  // with the same password asks nothing. The rules are the boot's settings; a new password is a
  // new hash.
  async passwordChangeRecommended(password: string, store: StoreNamed, user: UserEntity): Promise<boolean> {
    const subject = { ...passwordWords(user), storeName: store.name };
    const key = `${user.passwordHash}\u0000${JSON.stringify(subject)}`;
    let verdict = this.changeRecommended.get(key);
    if (verdict === undefined) {
      verdict = await this.passwords.recommendsChange(password, subject);
      this.changeRecommended.set(key, verdict);
    }
    return verdict;
  }

  async delete(storeId: string, id: string, inTx?: WithChange): Promise<boolean> {
    const user = await this.withChange(async (tx) => ((await this.users.delete(storeId, id, tx)) ? ({ id } as UserEntity) : null), inTx);
    return user !== null;
  }

  // The change alone, or the change and `inTx` in one transaction (`inTx` runs only when the
  // user was there).
  private async withChange(change: (tx?: Tx) => Promise<UserEntity | null>, inTx?: WithChange): Promise<UserEntity | null> {
    if (!inTx) return change();
    return this.transactions.run(async (tx) => {
      const user = await change(tx);
      if (user) await inTx(user, tx);
      return user;
    });
  }

  // Login looks only in the primary identifier's column; with emailOrMobile the format of the
  // username picks the column. The value is in its stored form, one however it is written;
  // undefined when the username fits no column.
  loginIdentifier(username: string): { column: 'email' | 'mobile'; value: string } | undefined {
    const primary = this.config.section(UserSection).primaryLoginIdentifier;
    const asEmail = primary === 'email' || (primary === 'emailOrMobile' && username.includes('@'));
    if (asEmail) return { column: 'email', value: username.trim().toLowerCase() };
    try {
      return { column: 'mobile', value: normalizeMobile(username, this.config.section(UserSection).defaultMobileRegion) };
    } catch {
      return undefined;
    }
  }

  // A username that fits no column matches nobody.
  async findByLoginIdentifier(storeId: string, username: string): Promise<UserEntity | null> {
    const identifier = this.loginIdentifier(username);
    if (!identifier) return null;
    return identifier.column === 'email' ? this.users.findByEmail(storeId, identifier.value) : this.users.findByMobile(storeId, identifier.value);
  }

  // An email or mobile number in its stored form (InvalidMobile for a number that is none).
  normalizeIdentifier(column: 'email' | 'mobile', value: string): string {
    return column === 'email' ? value.trim().toLowerCase() : normalizeMobile(value, this.config.section(UserSection).defaultMobileRegion);
  }

  // By an identifier already in its stored form, whatever the primary identifier is.
  findByIdentifier(storeId: string, column: 'email' | 'mobile', value: string): Promise<UserEntity | null> {
    return column === 'email' ? this.users.findByEmail(storeId, value) : this.users.findByMobile(storeId, value);
  }

  findByRole(storeId: string, role: string, tx?: Tx): Promise<UserEntity | null> {
    return this.users.findByRole(storeId, role, tx);
  }
}

function duplicateAsAppError(error: unknown): AppError | undefined {
  const e = error as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e.driverError?.code ?? e.code;
  if (code !== UNIQUE_VIOLATION) return undefined;
  const constraint = e.driverError?.constraint ?? e.constraint ?? '';
  const field = constraint.includes('mobile') ? 'mobile' : 'email';
  return new AppError('DuplicateIdentifier', `a user with this ${field} already exists in this store`);
}
