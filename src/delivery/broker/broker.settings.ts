import { Type } from 'class-transformer';
import { ArrayUnique, IsInt, Max, Min, ValidateNested } from 'class-validator';
import { DataObjectAccessSetting, EventSubscriptionSetting } from '../../kernel/data-objects.settings.js';

// Transport limits of the event channel.
export class EventChannelSettings {
  // Events waiting for one slow client; beyond it the client gets `error` and is dropped.
  @IsInt()
  @Min(1)
  @Max(100000)
  clientBufferLimit: number;

  // Topics one subscribe request may name.
  @IsInt()
  @Min(1)
  @Max(1000)
  maxTopicsPerRequest: number;

  @IsInt()
  @Min(1)
  @Max(3600)
  heartbeatSeconds: number;

  // Entries kept per Redis stream (XADD MAXLEN ~): events are transient.
  @IsInt()
  @Min(100)
  streamMaxLen: number;
}

// The event channel's transport limits, the subscriptions clients may take and the data
// objects' access levels: read by the broker (API completion events) and by the event channel above it.
export class BrokerSection {
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
}
