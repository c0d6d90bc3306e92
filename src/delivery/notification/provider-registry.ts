import type { OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import type { ChannelName, ProviderSetting } from '../../platform/config/notification-settings.js';
import type { EnvLookup, NotificationProvider } from './providers/provider.js';

export type ProviderFactory = (setting: ProviderSetting, env: EnvLookup) => NotificationProvider;

// One factory per provider type; a type without one stops the boot. Each provider's SDK is
// loaded only when the settings name a provider of its type (tens of MB each otherwise idle);
// it is still loaded and constructed at boot, so its own checks (Twilio's account SID) refuse
// the boot as before.
export const PROVIDER_FACTORIES: Partial<Record<ProviderSetting['providerType'], () => Promise<ProviderFactory>>> = {
  smtp: async () => {
    const { SmtpProvider } = await import('./providers/smtp.provider.js');
    return (s, env) => new SmtpProvider(s.providerName, s.providerSettings, env);
  },
  twilio: async () => {
    const { TwilioProvider } = await import('./providers/twilio.provider.js');
    return (s, env) => new TwilioProvider(s.providerName, s.providerSettings, env);
  },
  onesignal: async () => {
    const { OneSignalProvider } = await import('./providers/onesignal.provider.js');
    return (s, env) => new OneSignalProvider(s.providerName, s.providerSettings, env);
  },
};

// The configured providers, built and checked at boot, and each channel's delivery order:
// its providers, then its fallback providers. Provided by NotificationModule's factory.
export class ProviderRegistry implements OnModuleInit {
  private readonly problems: string[] = [];
  private readonly providers = new Map<string, NotificationProvider>();
  private readonly order = new Map<ChannelName, NotificationProvider[]>();

  // Loads the SDKs of the configured provider types, then builds the registry (the module's
  // async factory: the registry is complete before anything is given it).
  static async create(config: AppConfig, checks: BootChecks): Promise<ProviderRegistry> {
    const factories = new Map<ProviderSetting['providerType'], ProviderFactory | Error>();
    for (const type of new Set(config.settings.notifications.providers.map((p) => p.providerType))) {
      const load = PROVIDER_FACTORIES[type];
      if (load) factories.set(type, await load().catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))));
    }
    return new ProviderRegistry(config, factories, checks);
  }

  private constructor(
    config: AppConfig,
    factories: Map<ProviderSetting['providerType'], ProviderFactory | Error>,
    private readonly checks: BootChecks,
  ) {
    const { providers, channels } = config.settings.notifications;
    const problems = this.problems;
    for (const setting of providers) {
      const factory = factories.get(setting.providerType);
      try {
        if (!factory) throw new Error(`provider type ${setting.providerType} is not available`);
        if (factory instanceof Error) throw new Error(`provider type ${setting.providerType} could not be loaded: ${factory.message}`);
        if (this.providers.has(setting.providerName)) throw new Error('the name is used twice');
        this.providers.set(setting.providerName, factory(setting, config.secretFromEnv));
      } catch (error) {
        problems.push(`settings.notifications.providers: ${setting.providerName}: ${(error as Error).message}`);
      }
    }
    for (const channel of channels) {
      const names = [...channel.providers, ...channel.fallbackProviders];
      const missing = names.filter((n) => !this.providers.has(n));
      if (missing.length) problems.push(`settings.notifications.channels: ${channel.channelName} names unknown providers ${missing.join(', ')}`);
      if (channel.channelName !== 'inApp' && !names.length) problems.push(`settings.notifications.channels: ${channel.channelName} has no provider`);
      this.order.set(channel.channelName, names.filter((n) => this.providers.has(n)).map((n) => this.providers.get(n)!));
    }
  }

  // Reported at init with every module's settings problems (BootChecks).
  onModuleInit(): void {
    this.checks.report(this.problems);
  }

  forChannel(channel: ChannelName): NotificationProvider[] {
    return this.order.get(channel) ?? [];
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close?.()));
  }
}
