import { readFileSync } from 'node:fs';
import { plainToInstance, Type } from 'class-transformer';
import {
  Allow,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
  validateSync,
  type ValidationError,
} from 'class-validator';
import { AttributeRuleSetting, PermissionGroupSetting, PermissionTypesSetting } from './access-settings.js';
import { ConfigError } from './env.js';
import { ConsoleSettings } from './console-settings.js';
import { DataObjectAccessSetting, DomainEventSettings, EventChannelSettings, EventSubscriptionSetting } from './event-settings.js';
import { NotificationSettings } from './notification-settings.js';
import { PasswordlessLoginSettings } from './passwordless-settings.js';
import { VerificationSettings } from './verification-settings.js';
import { PasswordPolicySettings } from './password-policy-settings.js';
import { projectPath } from './project-path.js';
import { RealtimeChannelSettings } from './realtime-settings.js';
import { SocialLoginSettings, SsoSettings } from './social-settings.js';
import { RemoteSessionSettings } from './remote-session-settings.js';

export const PRIMARY_IDENTIFIERS = ['email', 'mobile', 'emailOrMobile'] as const;
export const SECONDARY_PRESENCES = ['none', 'optional', 'required'] as const;
export const DUAL_REGISTRATIONS = ['atLeastOne', 'both'] as const;
export const USER_NAME_TYPES = ['asFullname', 'asNamePair'] as const;
export const CUSTOM_PROPERTY_TYPES = ['string', 'number', 'boolean'] as const;
// multi: stores are tenants. single: one organisation (the root store), roles superAdmin, admin
// and user, no store registration and no store targeting.
export const TENANCY_MODES = ['multi', 'single'] as const;

export type PrimaryLoginIdentifier = (typeof PRIMARY_IDENTIFIERS)[number];
export type SecondaryIdentifierPresence = (typeof SECONDARY_PRESENCES)[number];
export type DualIdentifierRegistration = (typeof DUAL_REGISTRATIONS)[number];
export type UserNameType = (typeof USER_NAME_TYPES)[number];
export type Tenancy = (typeof TENANCY_MODES)[number];

export class CustomPropertySetting {
  @Matches(/^[A-Za-z][A-Za-z0-9_]{0,62}$/, { message: 'name must be an identifier (letters, digits, _)' })
  name: string;

  @IsIn(CUSTOM_PROPERTY_TYPES)
  type: (typeof CUSTOM_PROPERTY_TYPES)[number];

  @IsBoolean()
  required = false;

  // Longest accepted string value.
  @IsInt()
  @Min(1)
  @Max(10000)
  maxLength = 255;
}

// A role value is an identifier or a whole number (the spec allows both); users and grants
// hold it in its text form, responses give it back as declared.
export class CustomRoleSetting {
  @IsString()
  name: string;

  @ValidateBy({
    name: 'isRoleValue',
    validator: {
      validate: (v: unknown) => (typeof v === 'string' && /^[A-Za-z][A-Za-z0-9_-]{0,62}$/.test(v)) || (typeof v === 'number' && Number.isSafeInteger(v)),
      defaultMessage: () => 'value must be a role identifier or a whole number',
    },
  })
  value: string | number;
}

export class RateLimitSetting {
  @IsInt()
  @Min(1)
  points: number;

  @IsInt()
  @Min(1)
  durationSeconds: number;
}

export class RateLimitsSettings {
  // Successful public registrations per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  registration: RateLimitSetting;

  // Refused public registrations (invalid input, duplicates...) per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  registrationFailures: RateLimitSetting;

  // Failed logins per (store, username); a success clears the count.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  loginPerUsername: RateLimitSetting;

  // Login attempts per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  loginPerIp: RateLimitSetting;

  // Refreshes per session (every refresh token of one login counts together).
  @ValidateNested()
  @Type(() => RateLimitSetting)
  refreshPerSession: RateLimitSetting;

  // Refreshes per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  refreshPerIp: RateLimitSetting;

  // Wrong authenticator-app or recovery codes per pending sign-in; at the last one the sign-in
  // ends (its window should outlast a sign-in left pending).
  @ValidateNested()
  @Type(() => RateLimitSetting)
  totpPerSession: RateLimitSetting;

  // Wrong authenticator-app or recovery codes per user, over all its sessions and the routes that
  // take a code (enrolment, disabling, new recovery codes); a right code clears the count.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  totpPerUser: RateLimitSetting;

  // Passwordless starts and code submissions per (store, address), known or not; a sign-in
  // clears the count.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  passwordlessPerAddress: RateLimitSetting;

  // Passwordless starts and submissions per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  passwordlessPerIp: RateLimitSetting;
}

// Passkeys (WebAuthn): the relying party and the origins its ceremonies may come from.
export class WebAuthnSettings {
  // The domain passkeys are bound to (the web origins' registrable domain or one of its parents).
  @IsString()
  @Matches(/^[a-z0-9.-]{1,253}$/, { message: 'rpId must be a domain name (no scheme, port or path)' })
  rpId: string;

  @IsString()
  @Matches(/^.{1,100}$/, { message: 'rpName must be 1 to 100 characters' })
  rpName: string;

  // Web origins (https://app.example.com) and app origins (android:apk-key-hash:...).
  @IsArray()
  @ArrayNotEmpty({ message: 'origins must list at least one origin' })
  @IsString({ each: true })
  origins: string[];
}

export class PagingSettings {
  @IsInt()
  @Min(1)
  defaultPageSize: number;

  @IsInt()
  @Min(1)
  @Max(1000)
  maxPageSize: number;
}

export class SampleStoreSettings {
  @IsBoolean()
  enabled: boolean;

  @Matches(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/, { message: 'codename must be url-safe lower-case' })
  codename: string;

  @IsString()
  name: string;

  @IsString()
  fullname: string;
}

export const API_KEY_LOCATIONS = ['bearer', 'header', 'query', 'cookie', 'body'] as const;
export type ApiKeyLocation = (typeof API_KEY_LOCATIONS)[number];

export class ApiKeySettings {
  @IsBoolean()
  enabled: boolean;

  // Where callers put the key: a bearer value starting with sk_<project>_, or a named
  // header, query parameter, cookie or body property.
  @IsIn(API_KEY_LOCATIONS)
  location: ApiKeyLocation;

  @Matches(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, { message: 'fieldName must be a header, parameter or property name' })
  fieldName: string;
}

export class AuditLogSettings {
  // Off: nothing is recorded (the routes still read what was).
  @IsBoolean()
  enabled: boolean;

  // Entries older than this are deleted by the hourly sweep.
  @IsInt()
  @Min(1)
  @Max(3650)
  retentionDays: number;
}

export class MachineServiceSetting {
  // The calling service's short name; its tokens carry issuer `<name>-service`.
  @Matches(/^[a-z][a-z0-9-]{0,62}$/, { message: 'name must be a lower-case service name' })
  name: string;

  // Its Ed25519 public key: PEM text, or { "env": "NAME" }.
  @Allow()
  publicKey: string | { env: string };

  // What its tokens may do where a route or object asks for a permission.
  @IsOptional()
  @IsString({ each: true })
  permissions?: string[];
}

export class MachineTokenSettings {
  @ValidateNested({ each: true })
  @Type(() => MachineServiceSetting)
  services: MachineServiceSetting[];

  // Enforced when NODE_ENV is staging or production.
  @IsString({ each: true })
  machineToMachineBlockList: string[];

  // When not empty (staging, production): only these services.
  @IsString({ each: true })
  allowedM2MClients: string[];
}

// An origin as browsers send it (`scheme://host[:port]`), `https://*.example.com` for any
// subdomain, or `*` (any origin, only without credentials).
const ORIGIN = /^(\*|https?:\/\/(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:]+\])(:\d{1,5})?)$/i;

export class CorsSettings {
  // null: local dev origins (localhost, 127.0.0.1 on any port) in development and test, none
  // in staging and production. A list replaces that default.
  @IsOptional()
  @IsArray()
  @Matches(ORIGIN, { each: true, message: 'allowedOrigins: each entry must be scheme://host[:port] (no path), https://*.domain, or *' })
  allowedOrigins: string[] | null;

  // Browsers send cookies and the Authorization header cross-origin only when this is true.
  @IsBoolean()
  credentials: boolean;

  // Response headers pages may read, beside x-request-id and the access-token headers.
  @IsArray()
  @Matches(/^[A-Za-z0-9-]{1,64}$/, { each: true, message: 'exposedHeaders: each entry must be a header name' })
  exposedHeaders: string[];

  // How long browsers may cache a preflight answer.
  @IsInt()
  @Min(0)
  @Max(86400)
  maxAgeSeconds: number;
}

export const ANTI_BOT_PROVIDERS = ['none', 'altcha', 'hcaptcha', 'turnstile', 'recaptcha'] as const;
export type AntiBotProvider = (typeof ANTI_BOT_PROVIDERS)[number];

// A challenge before public registrations (and the verification starts that opt in).
export class AntiBotSettings {
  // none: off. altcha: our own proof-of-work challenge (GET /auth-api/challenge), no third party.
  // hcaptcha, turnstile, recaptcha: a token checked at the provider's verify URL.
  @IsIn(ANTI_BOT_PROVIDERS)
  provider: AntiBotProvider;

  // ALTCHA: the HMAC key signing challenges (required in staging and production: every replica
  // must share it). Others: the provider's secret key. Text, or { "env": "NAME" }.
  @Allow()
  secret: string | { env: string } | null;

  // The provider's verify endpoint; its public address when null.
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'verifyUrl must be an http(s) URL' })
  verifyUrl: string | null;

  // ALTCHA difficulty (largest number a client may have to try) and challenge lifetime.
  @IsInt()
  @Min(1000)
  @Max(10_000_000)
  altchaMaxNumber: number;

  @IsInt()
  @Min(10)
  @Max(3600)
  altchaExpireSeconds: number;
}

export class SuperAdminDataItem {
  @IsString()
  name: string;

  @Allow()
  value: unknown;
}

// The service settings file: behaviour, not infrastructure. Shipped defaults live in
// config/settings.default.json; a file named by SERVICE_SETTINGS merges into them (see merge).
export class ServiceSettings {
  @IsIn(TENANCY_MODES)
  tenancy: Tenancy;

  @IsIn(PRIMARY_IDENTIFIERS)
  primaryLoginIdentifier: PrimaryLoginIdentifier;

  @IsIn(SECONDARY_PRESENCES)
  secondaryIdentifierPresence: SecondaryIdentifierPresence;

  @IsIn(DUAL_REGISTRATIONS)
  dualIdentifierRegistration: DualIdentifierRegistration;

  @IsBoolean()
  emailVerificationRequiredForLogin: boolean;

  @IsBoolean()
  mobileVerificationRequiredForLogin: boolean;

  @IsBoolean()
  email2FARequiredForLogin: boolean;

  @IsBoolean()
  mobile2FARequiredForLogin: boolean;

  @IsBoolean()
  userRegisterIsPublic: boolean;

  @IsBoolean()
  tenantRegisterIsPublic: boolean;

  @IsBoolean()
  userGroupsActive: boolean;

  @IsBoolean()
  userGroupsInTenantLevel: boolean;

  @IsIn(USER_NAME_TYPES)
  userNameType: UserNameType;

  // Region used to read mobile numbers written without a leading `+` (ISO 3166 alpha-2), or null.
  @IsOptional()
  @Matches(/^[A-Z]{2}$/)
  defaultMobileRegion: string | null;

  @ValidateNested({ each: true })
  @Type(() => CustomPropertySetting)
  customUserProperties: CustomPropertySetting[];

  @ValidateNested({ each: true })
  @Type(() => CustomPropertySetting)
  customStoreProperties: CustomPropertySetting[];

  @IsBoolean()
  usersHaveMultipleRoles: boolean;

  @ValidateNested({ each: true })
  @Type(() => CustomRoleSetting)
  @ArrayUnique((r: CustomRoleSetting) => String(r.value), { message: 'customRoles values must be unique (7 and "7" are the same role)' })
  customRoles: CustomRoleSetting[];

  // Permission-based access control (src/identity/access): grants decide routes that declare a permission.
  @IsBoolean()
  pbacIsActive: boolean;

  @ValidateNested({ each: true })
  @Type(() => PermissionGroupSetting)
  permissionGroups: PermissionGroupSetting[];

  @ValidateNested()
  @Type(() => PermissionTypesSetting)
  permissionTypes: PermissionTypesSetting;

  @ValidateNested({ each: true })
  @Type(() => AttributeRuleSetting)
  @ArrayUnique((r: AttributeRuleSetting) => r.name, { message: 'attributeRules names must be unique' })
  attributeRules: AttributeRuleSetting[];

  // Grants that ship with the deployment: role value -> permissions, in every store.
  @IsObject()
  roleGrants: Record<string, string[]>;

  @ValidateNested({ each: true })
  @Type(() => SuperAdminDataItem)
  superAdminData: SuperAdminDataItem[];

  @ValidateNested()
  @Type(() => SampleStoreSettings)
  sampleStore: SampleStoreSettings;

  @ValidateNested()
  @Type(() => PagingSettings)
  paging: PagingSettings;

  @ValidateNested()
  @Type(() => RateLimitsSettings)
  rateLimits: RateLimitsSettings;

  // Session lifetime; also the access token's while accessTokenMinutes is null.
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.001)
  @Max(3650)
  tokenPeriodInDays: number;

  // Roles whose users must hold an app factor (TOTP or passkey): until they enrol one, only
  // the enrolment routes, /currentuser and logout answer them.
  @IsArray()
  @IsString({ each: true })
  mfaRequiredForRoles: string[];

  // Passkeys, or null (their routes answer 404 WebAuthnNotConfigured).
  @IsOptional()
  @ValidateNested()
  @Type(() => WebAuthnSettings)
  webauthn: WebAuthnSettings | null;

  // Short access tokens with rotating refresh tokens: the access token's lifetime in minutes,
  // or null for one token living as long as its session.
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1440)
  accessTokenMinutes: number | null;

  // How long a just-rotated refresh token still answers the pair it produced (two tabs
  // refreshing at once); 0: never, a second use ends the session.
  @IsInt()
  @Min(0)
  @Max(300)
  refreshReuseGraceSeconds: number;

  // The access tokens' `iss`; null: PUBLIC_URL (else the address the login came to) + /auth-api.
  @IsOptional()
  @IsString()
  @Matches(/^\S+$/, { message: 'tokenIssuer must be a URL or name without spaces' })
  tokenIssuer: string | null;

  // The access tokens' `aud`: one audience or a list; null: no `aud` claim.
  @IsOptional()
  @ValidateBy({
    name: 'isAudience',
    validator: {
      validate: (v: unknown) => {
        const list = Array.isArray(v) ? v : [v];
        return list.length > 0 && list.every((a) => typeof a === 'string' && /^\S{1,500}$/.test(a));
      },
      defaultMessage: () => 'tokenAudience must be a string or a non-empty list of strings, without spaces',
    },
  })
  tokenAudience: string | string[] | null;

  // How long a signing key signs before a new one takes over.
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.001)
  @Max(3650)
  keyRefreshPeriodInDays: number;

  // Live sessions a user may hold; a login beyond it ends the user's oldest session.
  @IsInt()
  @Min(1)
  @Max(10000)
  maxSessionsPerUser: number;

  // Uploaded avatar files a user may hold; an upload beyond it deletes the user's oldest file
  // that is not the current avatar.
  @IsInt()
  @Min(2)
  @Max(1000)
  avatarUploadsPerUser: number;

  // Sessions kept in the in-process cache when Redis is not configured.
  @IsInt()
  @Min(100)
  sessionCacheSize: number;

  @ValidateNested()
  @Type(() => ApiKeySettings)
  apiKeys: ApiKeySettings;

  // The security audit trail (docs/audit-log.md).
  @ValidateNested()
  @Type(() => AuditLogSettings)
  auditLog: AuditLogSettings;

  @ValidateNested()
  @Type(() => MachineTokenSettings)
  machineTokens: MachineTokenSettings;

  // Providers, channels, templates and event rules (notification-settings.ts).
  @ValidateNested()
  @Type(() => NotificationSettings)
  notifications: NotificationSettings;

  @ValidateNested()
  @Type(() => AntiBotSettings)
  antiBot: AntiBotSettings;

  // Cross-origin callers (browsers): HTTP routes and the event channel.
  @ValidateNested()
  @Type(() => CorsSettings)
  cors: CorsSettings;

  // Social login providers (social-settings.ts); a provider is used only when enabled.
  @ValidateNested()
  @Type(() => SocialLoginSettings)
  socialLogin: SocialLoginSettings;

  // Single sign-on through an OpenID Connect provider, or null.
  @IsOptional()
  @ValidateNested()
  @Type(() => SsoSettings)
  sso: SsoSettings | null;

  // Bearer tokens of a remote service and its sessions (remote-session.settings.ts), or null.
  @IsOptional()
  @ValidateNested()
  @Type(() => RemoteSessionSettings)
  remoteSession: RemoteSessionSettings | null;

  // Event subscriptions (event-settings.ts): what clients may subscribe to over Socket.IO or SSE.
  @ValidateNested({ each: true })
  @Type(() => EventSubscriptionSetting)
  @ArrayUnique((s: EventSubscriptionSetting) => s.name, { message: 'eventSubscriptions names must be unique' })
  eventSubscriptions: EventSubscriptionSetting[];

  // Access level per data object; the service's own objects keep their defaults unless listed.
  @ValidateNested({ each: true })
  @Type(() => DataObjectAccessSetting)
  @ArrayUnique((d: DataObjectAccessSetting) => d.name.toLowerCase(), { message: 'dataObjectAccess names must be unique' })
  dataObjectAccess: DataObjectAccessSetting[];

  @ValidateNested()
  @Type(() => EventChannelSettings)
  eventChannel: EventChannelSettings;

  // Delivery of the domain events written in the changes' transactions (the outbox).
  @ValidateNested()
  @Type(() => DomainEventSettings)
  domainEvents: DomainEventSettings;

  // Email and mobile verification, password reset and second factors (verification-settings.ts).
  @ValidateNested()
  @Type(() => VerificationSettings)
  verification: VerificationSettings;

  // Sign-in by a code or link sent to the email or mobile (passwordless-settings.ts).
  @ValidateNested()
  @Type(() => PasswordlessLoginSettings)
  passwordlessLogin: PasswordlessLoginSettings;
  // What a new password must be: length, strength, breaches (password-policy-settings.ts).
  @ValidateNested()
  @Type(() => PasswordPolicySettings)
  passwordPolicy: PasswordPolicySettings;

  // The Pusher-compatible realtime channel (realtime-settings.ts); null: the feature is off.
  @IsOptional()
  @ValidateNested()
  @Type(() => RealtimeChannelSettings)
  realtimeChannel: RealtimeChannelSettings | null;

  // Largest avatar upload, in bytes.
  @IsInt()
  @Min(1024)
  @Max(50 * 1024 * 1024)
  avatarMaxBytes: number;

  // The admin console served at `path` (console-settings.ts, docs/console.md).
  @ValidateNested()
  @Type(() => ConsoleSettings)
  console: ConsoleSettings;
}

// Any part of the settings, at any depth: it merges into the defaults as a settings file does.
// A Map (the social providers by name) is written as an object of its entries.
type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends Map<infer K, infer V>
    ? Map<K, V> | { [key in K & string]?: DeepPartial<V> }
    : T extends object
      ? { [K in keyof T]?: DeepPartial<T[K]> }
      : T;
export type SettingsOverrides = DeepPartial<ServiceSettings>;

export const DEFAULT_SETTINGS_FILE = projectPath('config', 'settings.default.json');
// Applied over the defaults when NODE_ENV is development: limits a developer does not hit.
export const DEVELOPMENT_SETTINGS_FILE = projectPath('config', 'settings.development.json');

function readJson(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError([`settings file ${path}: ${(e as Error).message}`]);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the top level must be an object');
    return parsed as Record<string, unknown>;
  } catch (e) {
    throw new ConfigError([`settings file ${path}: not valid (${(e as Error).message})`]);
  }
}

// Objects merge at every depth (so `paging: { maxPageSize }` keeps `defaultPageSize`, and one
// field of one verification flow keeps the flow's other defaults); arrays and scalars replace.
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, entry] of Object.entries(over)) {
    // Validated settings given again (a replica's): their Maps merge as the objects they were.
    const value: unknown = entry instanceof Map ? Object.fromEntries(entry) : entry;
    const prev = out[key];
    const bothObjects = [prev, value].every((v) => v && typeof v === 'object' && !Array.isArray(v));
    out[key] = bothObjects ? merge(prev as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}

function flatten(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix + e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => `${path}: ${m}`);
    return own.concat(flatten(e.children ?? [], path + '.'));
  });
}

// A settings section the service's own class does not declare: added by whoever composes the
// service (an extension), under its own top-level key, validated with its own class the same way
// and reported in the same one ConfigError.
export interface SettingsSection<T extends object = object> {
  key: string;
  schema: new () => T;
}

// The validated sections, by their class.
export type SectionValues = ReadonlyMap<new () => object, object>;

export function loadSettings(file: string | undefined, overrides: SettingsOverrides = {}, nodeEnv?: string): ServiceSettings {
  return loadSettingsWithSections(file, overrides, nodeEnv, []).settings;
}

export function loadSettingsWithSections(
  file: string | undefined,
  overrides: SettingsOverrides & Record<string, unknown> = {},
  nodeEnv: string | undefined,
  sections: readonly SettingsSection[],
): { settings: ServiceSettings; sections: SectionValues } {
  const shipped = readJson(DEFAULT_SETTINGS_FILE);
  const defaults = nodeEnv === 'development' ? merge(shipped, readJson(DEVELOPMENT_SETTINGS_FILE)) : shipped;
  const fromFile = file ? readJson(file) : {};
  const known = new Set(Object.keys(defaults));
  const clashes = sections.filter((section) => known.has(section.key)).map((section) => `settings: section "${section.key}" of an extension is one of the service's own keys`);
  if (clashes.length) throw new ConfigError(clashes);
  const sectionKeys = new Set(sections.map((section) => section.key));
  const unknown = Object.keys({ ...fromFile, ...overrides }).filter((k) => !known.has(k) && !sectionKeys.has(k));
  if (unknown.length) throw new ConfigError(unknown.map((k) => `settings: unknown key "${k}"`));

  const all = merge(merge(defaults, fromFile), overrides as Record<string, unknown>);
  const plain = Object.fromEntries(Object.entries(all).filter(([k]) => known.has(k)));
  const settings = plainToInstance(ServiceSettings, plain, { exposeDefaultValues: true });
  // Unknown keys inside objects are refused too: a misspelt key would otherwise do nothing.
  const problems = flatten(validateSync(settings, { forbidUnknownValues: false, whitelist: true, forbidNonWhitelisted: true }));
  if (settings.cors?.credentials && settings.cors.allowedOrigins?.includes('*')) {
    problems.push('cors.allowedOrigins: "*" cannot be combined with credentials: true (list the origins, or set credentials to false)');
  }
  const values = new Map<new () => object, object>();
  for (const section of sections) {
    const raw = all[section.key] ?? {};
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push(`${section.key}: must be an object`);
      continue;
    }
    const value = plainToInstance(section.schema, raw, { exposeDefaultValues: true });
    problems.push(...flatten(validateSync(value, { forbidUnknownValues: false, whitelist: true, forbidNonWhitelisted: true }), `${section.key}.`));
    values.set(section.schema, value);
  }
  if (problems.length) throw new ConfigError(problems.map((p) => `settings.${p}`));
  return { settings, sections: values };
}
