import { Type } from 'class-transformer';
import { IsBoolean, IsInt, Max, Min, ValidateNested } from 'class-validator';

// Webhooks: signed deliveries of a store's events to its endpoints (docs/webhooks.md).
export class WebhookSettings {
  // false: the routes answer 404 and nothing is delivered.
  @IsBoolean()
  enabled: boolean;

  // Endpoints on loopback, private, link-local, CGNAT, multicast or metadata addresses are
  // refused unless true (development and tests only).
  @IsBoolean()
  allowPrivateNetworks: boolean;

  // `http:` endpoints are refused unless true.
  @IsBoolean()
  allowHttp: boolean;

  // One attempt's limit, from the connection to the answer's end.
  @IsInt()
  @Min(1000)
  @Max(60_000)
  timeoutMs: number;

  @IsInt()
  @Min(1)
  @Max(1000)
  maxEndpointsPerStore: number;

  // An endpoint whose deliveries keep failing this long is disabled (its owner told).
  @IsInt()
  @Min(1)
  @Max(365)
  disableAfterFailingDays: number;

  // After a rotation the old secret signs beside the new one this long.
  @IsInt()
  @Min(0)
  @Max(720)
  secretOverlapHours: number;
}

export class WebhookSection {
  @ValidateNested()
  @Type(() => WebhookSettings)
  webhooks: WebhookSettings;
}
