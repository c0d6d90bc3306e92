import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsBoolean, IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageQuery } from '../../kernel/paging.js';
import type { DeliveryStatus, WebhookDeliveryEntity, WebhookEndpointEntity } from './webhook.entity.js';

const TOPICS_DESCRIPTION = 'The events sent: `user-created`, `user-updated`, `user-deleted`, `store-created`, `apikey-created`, `apikey-deleted`, `notification-created`, `session-ended`, `audit:<action>` (an audit entry, e.g. `audit:user.login.failed`), or `*` for all.';

export class CreateWebhookInput {
  @ApiProperty({ example: 'https://hooks.example.com/identity', maxLength: 2048, description: '`https` (unless `webhooks.allowHttp`), on a public address (unless `webhooks.allowPrivateNetworks`).' })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiProperty({ type: [String], example: ['user-created', 'audit:user.login.failed'], description: TOPICS_DESCRIPTION })
  @IsString({ each: true })
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ArrayUnique()
  topics: string[];

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateWebhookInput {
  @ApiPropertyOptional({ maxLength: 2048 })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ type: [String], description: TOPICS_DESCRIPTION })
  @IsOptional()
  @IsString({ each: true })
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ArrayUnique()
  topics?: string[];

  @ApiPropertyOptional({ maxLength: 500, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({ description: 'Enabling an endpoint the service disabled (`disabledReason`) clears the reason.' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class WebhookIdParam {
  @IsUUID()
  id: string;
}

export class DeliveryIdParam {
  @IsUUID()
  id: string;

  @IsUUID()
  deliveryId: string;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const satisfies readonly DeliveryStatus[];

export class DeliveryQuery extends PageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}

export class WebhookResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: [String] }) topics: string[];
  @ApiProperty({ type: 'string', nullable: true }) description: string | null;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: 'string', nullable: true, description: 'Why the service disabled it: `gone` (it answered 410) or `failing` (it failed for `webhooks.disableAfterFailingDays`).' }) disabledReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class WebhookWithSecretResponse extends WebhookResponse {
  @ApiProperty({ description: 'The signing secret (`whsec_` + base64), shown in this answer only.' }) secret: string;
}

export class DeliveryResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: 'The `webhook-id` of every attempt.' }) eventId: string;
  @ApiProperty() topic: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty({ type: 'integer' }) attempts: number;
  @ApiProperty({ type: 'integer', nullable: true }) responseStatus: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The first kilobyte of the last answer.' }) responseBody: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Why the last attempt had no answer (a timeout, a refused address, a connection error).' }) error: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) durationMs: number | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) lastAttemptAt: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) nextAttemptAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export function toWebhookResponse(row: WebhookEndpointEntity): WebhookResponse {
  return {
    id: row.id,
    url: row.url,
    topics: row.topics,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toDeliveryResponse(row: WebhookDeliveryEntity): DeliveryResponse {
  return {
    id: row.id,
    eventId: row.eventId,
    topic: row.topic,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.responseStatus,
    responseBody: row.responseBody,
    error: row.error,
    durationMs: row.durationMs,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: row.status === 'pending' ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    createdAt: row.createdAt.toISOString(),
  };
}
