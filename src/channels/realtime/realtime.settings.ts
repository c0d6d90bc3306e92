import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';

// A credential named by the settings file and read from the environment at boot.
export class EnvSecretSetting {
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, { message: 'env must name an environment variable' })
  env: string;
}

// One of the service's own events sent to a realtime channel: `topic` is a broker topic or an
// event-channel alias (`user.created`, `dbEvent:user:updated`); `channel` names the channel with
// `{storeCodename}` standing for the event's store.
export class RealtimeForwardRuleSetting {
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  topic: string;

  @IsString()
  @MinLength(1)
  @MaxLength(250)
  channel: string;

  @IsString()
  @MinLength(1)
  @MaxLength(200)
  event: string;
}

// The Pusher-compatible provider (SPEC "Outbound realtime channel integration"). Absent: the
// feature is off. The secret is never written here: `{ "env": "NAME" }`.
export class RealtimeChannelSettings {
  @IsString()
  @MinLength(1)
  appId: string;

  @IsString()
  @MinLength(1)
  key: string;

  @ValidateNested()
  @Type(() => EnvSecretSetting)
  secret: EnvSecretSetting;

  @IsString()
  @MinLength(1)
  cluster: string;

  @IsOptional()
  @IsBoolean()
  useTLS?: boolean;

  // Overrides the cluster's API host.
  @IsOptional()
  @Matches(/^[A-Za-z0-9.-]{1,253}$/, { message: 'host must be a host name, without scheme or port' })
  host?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65535)
  port?: number;

  @IsOptional()
  @IsString()
  encryptionMasterKeyBase64?: string;

  // An http(s) proxy for the provider's REST API.
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'proxy must be an http(s) URL' })
  proxy?: string;

  // Milliseconds before a provider request is abandoned.
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(120_000)
  timeout?: number;

  @IsOptional()
  @IsBoolean()
  keepAlive?: boolean;

  @ValidateNested({ each: true })
  @Type(() => RealtimeForwardRuleSetting)
  forwardRules: RealtimeForwardRuleSetting[] = [];
}

export class RealtimeSection {
  // The Pusher-compatible realtime channel (realtime-settings.ts); null: the feature is off.
  @IsOptional()
  @ValidateNested()
  @Type(() => RealtimeChannelSettings)
  realtimeChannel: RealtimeChannelSettings | null;
}
