import { readFileSync } from 'node:fs';
import { plainToInstance, Type } from 'class-transformer';
import {
  Allow,
  ArrayUnique,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
  validateSync,
  type ValidationError,
} from 'class-validator';
import { ConfigError } from './env.js';
import { NotificationSettings } from './notification-settings.js';
import { projectPath } from './project-path.js';

export const PRIMARY_IDENTIFIERS = ['email', 'mobile', 'emailOrMobile'] as const;
export const SECONDARY_PRESENCES = ['none', 'optional', 'required'] as const;
export const DUAL_REGISTRATIONS = ['atLeastOne', 'both'] as const;
export const USER_NAME_TYPES = ['asFullname', 'asNamePair'] as const;
export const CUSTOM_PROPERTY_TYPES = ['string', 'number', 'boolean'] as const;

export type PrimaryLoginIdentifier = (typeof PRIMARY_IDENTIFIERS)[number];
export type SecondaryIdentifierPresence = (typeof SECONDARY_PRESENCES)[number];
export type DualIdentifierRegistration = (typeof DUAL_REGISTRATIONS)[number];
export type UserNameType = (typeof USER_NAME_TYPES)[number];

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

export class CustomRoleSetting {
  @IsString()
  name: string;

  @Matches(/^[A-Za-z][A-Za-z0-9_-]{0,62}$/, { message: 'value must be a role identifier' })
  value: string;
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
  // Public registrations per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  registration: RateLimitSetting;

  // Failed logins per (store, username); a success clears the count.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  loginPerUsername: RateLimitSetting;

  // Login attempts per client IP.
  @ValidateNested()
  @Type(() => RateLimitSetting)
  loginPerIp: RateLimitSetting;
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

export class MachineServiceSetting {
  // The calling service's short name; its tokens carry issuer `<name>-service`.
  @Matches(/^[a-z][a-z0-9-]{0,62}$/, { message: 'name must be a lower-case service name' })
  name: string;

  // Its Ed25519 public key: PEM text, or { "env": "NAME" }.
  @Allow()
  publicKey: string | { env: string };
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

export class SuperAdminDataItem {
  @IsString()
  name: string;

  @Allow()
  value: unknown;
}

// The service settings file: behaviour, not infrastructure. Shipped defaults live in
// config/settings.default.json; a file named by SERVICE_SETTINGS overrides them key by key.
export class ServiceSettings {
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
  @ArrayUnique((r: CustomRoleSetting) => r.value, { message: 'customRoles values must be unique' })
  customRoles: CustomRoleSetting[];

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

  // Access token and session lifetime.
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.001)
  @Max(3650)
  tokenPeriodInDays: number;

  // How long a signing key signs before a new one takes over.
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.001)
  @Max(3650)
  keyRefreshPeriodInDays: number;

  // Sessions kept in the in-process cache when Redis is not configured.
  @IsInt()
  @Min(100)
  sessionCacheSize: number;

  @ValidateNested()
  @Type(() => ApiKeySettings)
  apiKeys: ApiKeySettings;

  @ValidateNested()
  @Type(() => MachineTokenSettings)
  machineTokens: MachineTokenSettings;

  // Providers, channels, templates and event rules (notification-settings.ts).
  @ValidateNested()
  @Type(() => NotificationSettings)
  notifications: NotificationSettings;

  // Largest avatar upload, in bytes.
  @IsInt()
  @Min(1024)
  @Max(50 * 1024 * 1024)
  avatarMaxBytes: number;
}

export type SettingsOverrides = { [K in keyof ServiceSettings]?: ServiceSettings[K] extends object[] ? ServiceSettings[K] : ServiceSettings[K] extends object ? Partial<ServiceSettings[K]> : ServiceSettings[K] };

export const DEFAULT_SETTINGS_FILE = projectPath('config', 'settings.default.json');

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

// Objects merge one level deep (so `paging: { maxPageSize }` keeps `defaultPageSize`); arrays replace.
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) {
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

export function loadSettings(file: string | undefined, overrides: SettingsOverrides = {}): ServiceSettings {
  const defaults = readJson(DEFAULT_SETTINGS_FILE);
  const fromFile = file ? readJson(file) : {};
  const known = new Set(Object.keys(defaults));
  const unknown = Object.keys({ ...fromFile, ...overrides }).filter((k) => !known.has(k));
  if (unknown.length) throw new ConfigError(unknown.map((k) => `settings: unknown key "${k}"`));

  const plain = merge(merge(defaults, fromFile), overrides as Record<string, unknown>);
  const settings = plainToInstance(ServiceSettings, plain, { exposeDefaultValues: true });
  // Unknown keys inside objects are refused too: a misspelt key would otherwise do nothing.
  const problems = flatten(validateSync(settings, { forbidUnknownValues: false, whitelist: true, forbidNonWhitelisted: true }));
  if (problems.length) throw new ConfigError(problems.map((p) => `settings.${p}`));
  return settings;
}
