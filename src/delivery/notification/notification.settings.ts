import { Type } from 'class-transformer';
import { Allow, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';
import { CHANNEL_NAMES, TemplateSetting, type ChannelName } from '../../kernel/templates.settings.js';

// The channels and the template shape are shared with the extensions' catalogue (kernel).
export { CHANNEL_NAMES, TemplateSetting, type ChannelName };

export const PROVIDER_TYPES = ['smtp', 'twilio', 'onesignal'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];


const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,62}$/;

// A delivery service. Credentials are never written here: a value `{ "env": "NAME" }` is read
// from the environment variable NAME at boot.
export class ProviderSetting {
  @Matches(NAME, { message: 'providerName must be an identifier' })
  providerName: string;

  @IsIn(PROVIDER_TYPES)
  providerType: ProviderType;

  @IsObject()
  @Allow()
  providerSettings: Record<string, unknown>;
}

export class ChannelSetting {
  @IsIn(CHANNEL_NAMES)
  channelName: ChannelName;

  @IsString({ each: true })
  providers: string[];

  @IsString({ each: true })
  fallbackProviders: string[];
}

export class EventRuleSetting {
  @IsString()
  eventName: string;

  @IsString()
  template: string;

  @IsIn(CHANNEL_NAMES)
  channel: ChannelName;

  // CEL over `event` (the payload): a user id, or an address for the channel.
  @IsString()
  recipient: string;

  // Variable name → CEL over `event`.
  @IsObject()
  @Allow()
  contextVars: Record<string, string>;

  // A rule set to false is checked at boot but reacts to nothing (default true).
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  // CEL over `event`: the rule reacts only to events for which it is true (default: every event).
  @IsOptional()
  @IsString()
  when?: string;
}

export class NotificationWorkerSetting {
  @IsInt()
  @Min(1)
  @Max(100)
  concurrency: number;

  @IsInt()
  @Min(1)
  @Max(50)
  maxAttempts: number;

  // First retry after about this long; each next one doubles, with jitter.
  @IsInt()
  @Min(1)
  backoffMs: number;

  // BullMQ only: how long a worker owns a job without renewing; a dead worker's job goes to
  // another worker after this (the default, 30 s, suits production; tests use a short one).
  @IsOptional()
  @IsInt()
  @Min(1000)
  lockDurationMs?: number = 30_000;
}

export class NotificationSettings {
  @Matches(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/)
  defaultLanguage: string;

  @ValidateNested({ each: true })
  @Type(() => ProviderSetting)
  providers: ProviderSetting[];

  @ValidateNested({ each: true })
  @Type(() => ChannelSetting)
  channels: ChannelSetting[];

  @ValidateNested({ each: true })
  @Type(() => TemplateSetting)
  templates: TemplateSetting[];

  @ValidateNested({ each: true })
  @Type(() => EventRuleSetting)
  eventRules: EventRuleSetting[];

  @ValidateNested()
  @Type(() => NotificationWorkerSetting)
  worker: NotificationWorkerSetting;
}

export class NotificationSection {
  // Providers, channels, templates and event rules (notification-settings.ts).
  @ValidateNested()
  @Type(() => NotificationSettings)
  notifications: NotificationSettings;
}
