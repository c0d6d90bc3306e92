import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ConfigError } from '../config/env.js';
import type { ChannelName, ProviderSetting } from '../config/notification-settings.js';
import type { EnvLookup, NotificationProvider } from './providers/provider.js';
import { OneSignalProvider } from './providers/onesignal.provider.js';
import { SmtpProvider } from './providers/smtp.provider.js';
import { TwilioProvider } from './providers/twilio.provider.js';

export type ProviderFactory = (setting: ProviderSetting, env: EnvLookup) => NotificationProvider;

// One factory per provider type; a type without one stops the boot.
export const PROVIDER_FACTORIES: Partial<Record<ProviderSetting['providerType'], ProviderFactory>> = {
  smtp: (s, env) => new SmtpProvider(s.providerName, s.providerSettings, env),
  twilio: (s, env) => new TwilioProvider(s.providerName, s.providerSettings, env),
  onesignal: (s, env) => new OneSignalProvider(s.providerName, s.providerSettings, env),
};

// The configured providers, built and checked at boot, and each channel's delivery order:
// its providers, then its fallback providers.
@Injectable()
export class ProviderRegistry implements OnModuleInit {
  private readonly problems: string[] = [];
  private readonly providers = new Map<string, NotificationProvider>();
  private readonly order = new Map<ChannelName, NotificationProvider[]>();

  constructor(config: AppConfig) {
    const { providers, channels } = config.settings.notifications;
    const problems = this.problems;
    for (const setting of providers) {
      const factory = PROVIDER_FACTORIES[setting.providerType];
      try {
        if (!factory) throw new Error(`provider type ${setting.providerType} is not available`);
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

  // Reported at init, not from the constructor: a refused boot then closes the app, which
  // releases the database pool and Redis connections already opened (see createApp).
  onModuleInit(): void {
    if (this.problems.length) throw new ConfigError(this.problems);
  }

  forChannel(channel: ChannelName): NotificationProvider[] {
    return this.order.get(channel) ?? [];
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close?.()));
  }
}
