import 'reflect-metadata'; // the sections' decorators (class-transformer's @Type) read design types as they load
import { RealtimeSection } from './channels/realtime/realtime.settings.js';
import { BrokerSection } from './delivery/broker/broker.settings.js';
import { NotificationSection } from './delivery/notification/notification.settings.js';
import { AccessSection } from './identity/access/access.settings.js';
import { AntiBotSection } from './identity/antibot/antibot.settings.js';
import { ApiKeySection } from './identity/apikey/api-key.settings.js';
import { BucketSection } from './identity/bucket/bucket.settings.js';
import { OidcProviderSection } from './identity/oauth-client/oauth-client.settings.js';
import { MachineTokenSection } from './identity/m2m/m2m.settings.js';
import { PasswordPolicySection } from './identity/password-policy/password-policy.settings.js';
import { PasswordlessSection } from './identity/passwordless/passwordless.settings.js';
import { RegistrationSection } from './identity/registration/registration.settings.js';
import { RemoteSessionSection } from './identity/remote-session/remote-session.settings.js';
import { SeedSection } from './identity/seed/seed.settings.js';
import { SessionSection } from './identity/session/session.settings.js';
import { SigningKeySection } from './identity/signing-key/signing-key.settings.js';
import { SocialSection } from './identity/social/social.settings.js';
import { TokenSection } from './identity/token/token.settings.js';
import { UserSection } from './identity/user/user.settings.js';
import { VerificationSection } from './identity/verification/verification.settings.js';
import { CorsSection } from './kernel/cors.settings.js';
import { CustomPropertiesSection } from './kernel/custom-properties.settings.js';
import { DomainEventSection } from './kernel/domain-events.settings.js';
import { PagingSection } from './kernel/paging.settings.js';
import { PublicRoutesSection } from './kernel/policy.settings.js';
import { RateLimitSection } from './kernel/rate-limit/rate-limit.settings.js';
import { TenancySection } from './kernel/tenancy.settings.js';
import { AuditLogSection } from './operations/audit/audit.settings.js';
import { ConsoleSection } from './operations/console/console.settings.js';
import { AppConfig, type ConfigSources } from './platform/config/app-config.js';
import { flatSettings, loadSections, type DeepPartial, type SettingsOf, type SettingsSection } from './platform/config/settings.js';
import { WebhookSection } from './channels/webhooks/webhook.settings.js';

// The service's settings file, composed from the sections its features own (ADR 27): each
// feature declares the top-level keys it reads in its `<feature>.settings.ts`, and reads them with
// `config.section(TheSection)`. Extensions' sections (each under its own key) join these at boot.
export const CORE_SECTIONS = [
  { schema: TenancySection },
  { schema: UserSection },
  { schema: VerificationSection },
  { schema: PublicRoutesSection },
  { schema: RegistrationSection },
  { schema: AccessSection },
  { schema: CustomPropertiesSection },
  { schema: SeedSection },
  { schema: PagingSection },
  { schema: RateLimitSection },
  { schema: SessionSection },
  { schema: TokenSection },
  { schema: SigningKeySection },
  { schema: BucketSection },
  { schema: ApiKeySection },
  { schema: AuditLogSection },
  { schema: MachineTokenSection },
  { schema: NotificationSection },
  { schema: AntiBotSection },
  { schema: CorsSection },
  { schema: SocialSection },
  { schema: RemoteSessionSection },
  { schema: BrokerSection },
  { schema: DomainEventSection },
  { schema: PasswordlessSection },
  { schema: PasswordPolicySection },
  { schema: RealtimeSection },
  { schema: ConsoleSection },
  { schema: WebhookSection },
  { schema: OidcProviderSection },
] as const satisfies readonly SettingsSection[];

// The whole settings file, as one typed object (what `SERVICE_SETTINGS` holds).
export type ServiceSettings = SettingsOf<typeof CORE_SECTIONS>;
// Any part of it, merged into the defaults as the file is (tests, embedding).
export type SettingsOverrides = DeepPartial<ServiceSettings>;

export interface ServiceConfigSources extends Omit<ConfigSources, 'settings'> {
  settings?: SettingsOverrides & Record<string, unknown>;
}

// The service's configuration: the platform's AppConfig over the core sections and the given
// ones (extensions'). Features inject AppConfig and read their own section; the root (and the
// tests, which see the service as a whole) also read every key at once through `settings`.
export class ServiceConfig extends AppConfig {
  private view: ServiceSettings | undefined;

  static override load(sources: ServiceConfigSources = {}): ServiceConfig {
    const { env, source, values } = AppConfig.read({ ...sources, sections: [...CORE_SECTIONS, ...(sources.sections ?? [])] });
    return new ServiceConfig(env, source, values);
  }

  get settings(): ServiceSettings {
    return (this.view ??= this.merged(CORE_SECTIONS));
  }
}

// The settings file with the shipped defaults and the given overrides, validated (no environment).
export function loadSettings(file: string | undefined, overrides: SettingsOverrides & Record<string, unknown> = {}, nodeEnv?: string): ServiceSettings {
  return flatSettings(loadSections(file, overrides, nodeEnv, CORE_SECTIONS), CORE_SECTIONS);
}
