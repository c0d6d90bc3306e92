import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';

// What pusher-js sends to its channel authorization endpoint (form-encoded or JSON).
export class ChannelAuthInput {
  @ApiProperty({ example: '1234.5678' })
  @IsString()
  @MaxLength(64)
  socket_id: string;

  @ApiProperty({ example: 'private-acme_orders' })
  @IsString()
  @MaxLength(300)
  channel_name: string;
}

// What pusher-js sends to its user authentication endpoint.
export class UserAuthInput {
  @ApiProperty({ example: '1234.5678' })
  @IsString()
  @MaxLength(64)
  socket_id: string;
}

// What pusher-js expects back from the channel authorization endpoint.
export class ChannelAuthResponse {
  @ApiProperty({ description: '`<key>:<signature>`' }) auth: string;
  @ApiProperty({ required: false, description: 'presence channels: the member as JSON' }) channel_data?: string;
  @ApiProperty({ required: false, description: 'encrypted channels: the channel key, base64' }) shared_secret?: string;
}

// What pusher-js expects back from the user authentication endpoint.
export class UserAuthResponse {
  @ApiProperty({ description: '`<key>:<signature>`' }) auth: string;
  @ApiProperty({ description: 'the user as JSON (`id`, `name`)' }) user_data: string;
}

export class WebhookResponse {
  @ApiProperty({ example: 'OK' }) status: string;
  @ApiProperty({ description: 'events published on the broker' }) received: number;
}
