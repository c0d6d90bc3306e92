import type { OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import type { ChannelName, ChannelSetting, ProviderSetting } from './notification.settings.js';
import type { EnvLookup, NotificationProvider } from './providers/provider.js';
import { NotificationSection } from './notification.settings.js';

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

// As the settings' providerName: it is recorded on each delivery attempt.
const PROVIDER_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,62}$/;

// Where an extension's provider serves: a channel, among its providers or its fallbacks.
export interface ProviderPlacement {
  channel: ChannelName;
  // Tried after the channel's other providers have failed (default false).
  fallback?: boolean;
}

// The providers, each channel's delivery order (its providers, then its fallback providers):
// those the settings configure, built and checked at boot, and those extensions register in
// code. Provided by NotificationModule's factory.
export class ProviderRegistry implements OnModuleInit {
  private readonly problems: string[] = [];
  private readonly providers = new Map<string, NotificationProvider>();
  // Extensions' providers placed on a channel, in the order they were registered.
  private readonly placed: { name: string; placement: ProviderPlacement }[] = [];
  private readonly channels: readonly ChannelSetting[];
  // Settled once every module's init has registered its providers (BootChecks.assert).
  private order?: Map<ChannelName, NotificationProvider[]>;

  // Loads the SDKs of the configured provider types, then builds the registry (the module's
  // async factory: the registry is complete before anything is given it).
  static async create(config: AppConfig, checks: BootChecks): Promise<ProviderRegistry> {
    const factories = new Map<ProviderSetting['providerType'], ProviderFactory | Error>();
    for (const type of new Set(config.section(NotificationSection).notifications.providers.map((p) => p.providerType))) {
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
    const { providers, channels } = config.section(NotificationSection).notifications;
    this.channels = channels;
    for (const setting of providers) {
      const factory = factories.get(setting.providerType);
      try {
        if (!factory) throw new Error(`provider type ${setting.providerType} is not available`);
        if (factory instanceof Error) throw new Error(`provider type ${setting.providerType} could not be loaded: ${factory.message}`);
        if (this.providers.has(setting.providerName)) throw new Error('the name is used twice');
        this.providers.set(setting.providerName, factory(setting, config.secretFromEnv));
      } catch (error) {
        this.problems.push(`settings.notifications.providers: ${setting.providerName}: ${(error as Error).message}`);
      }
    }
    // The channels' order waits for the extensions' providers: a channel's settings may name them.
    checks.defer(() => this.settle());
  }

  // Reported at init with every module's settings problems (BootChecks).
  onModuleInit(): void {
    this.checks.report(this.problems);
  }

  // An extension's provider (implementing providers/provider.ts), from its module's onModuleInit.
  // With a placement it serves that channel after the channel's configured providers (or after
  // its fallbacks); without, only where the settings' channels name it. A name that is not an
  // identifier or is taken, or a channel the settings do not configure, stops the boot.
  register(provider: NotificationProvider, placement?: ProviderPlacement): void {
    const at = `notification provider "${String(provider.name)}" registered in code`;
    if (this.order) return this.checks.report([`${at}: too late, register providers in a module's onModuleInit`]);
    if (typeof provider.name !== 'string' || !PROVIDER_NAME.test(provider.name)) return this.checks.report([`${at}: the name must be an identifier (letters, digits, _ . -)`]);
    if (this.providers.has(provider.name)) return this.checks.report([`${at}: the name is taken`]);
    if (placement && (placement.channel === 'inApp' || !this.channels.some((c) => c.channelName === placement.channel))) {
      return this.checks.report([`${at}: settings.notifications.channels has no ${placement.channel} channel a provider delivers`]);
    }
    this.providers.set(provider.name, provider);
    if (placement) this.placed.push({ name: provider.name, placement });
  }

  forChannel(channel: ChannelName): NotificationProvider[] {
    return this.order?.get(channel) ?? [];
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close?.()));
  }

  // Each channel's delivery order, now that every provider is known; what a channel lacks.
  private settle(): string[] {
    const problems: string[] = [];
    const order = new Map<ChannelName, NotificationProvider[]>();
    for (const channel of this.channels) {
      const placed = (fallback: boolean) => this.placed.filter((p) => p.placement.channel === channel.channelName && !!p.placement.fallback === fallback).map((p) => p.name);
      const names = [...new Set([...channel.providers, ...placed(false), ...channel.fallbackProviders, ...placed(true)])];
      const missing = names.filter((n) => !this.providers.has(n));
      if (missing.length) problems.push(`settings.notifications.channels: ${channel.channelName} names unknown providers ${missing.join(', ')}`);
      if (channel.channelName !== 'inApp' && !names.length) problems.push(`settings.notifications.channels: ${channel.channelName} has no provider`);
      order.set(channel.channelName, names.filter((n) => this.providers.has(n)).map((n) => this.providers.get(n)!));
    }
    this.order = order;
    return problems;
  }
}
