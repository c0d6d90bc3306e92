import { ApiProperty } from '@nestjs/swagger';

export class SignInBucketResponse {
  @ApiProperty({ format: 'date-time', description: 'Start of the period (UTC): an hour, or a day at 00:00Z.' }) from: string;
  @ApiProperty({ type: 'integer', description: '`user.login.succeeded` entries of the store in the period.' }) succeeded: number;
  @ApiProperty({ type: 'integer', description: '`user.login.failed` entries of the store in the period.' }) failed: number;
}

export class SignInSeriesResponse {
  @ApiProperty({ type: [SignInBucketResponse], description: '24 hourly periods, oldest first; the current hour last.' }) last24h: SignInBucketResponse[];
  @ApiProperty({ type: [SignInBucketResponse], description: '7 daily periods (UTC days), oldest first; today last.' }) last7d: SignInBucketResponse[];
}

// GET /v1/overview: the targeted store at a glance.
export class OverviewResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: 'integer', description: 'The store\'s users, active or not.' }) users: number;
  @ApiProperty({ type: 'integer', description: 'The store\'s sessions that have not expired (every user\'s devices).' }) activeSessions: number;
  @ApiProperty({ type: SignInSeriesResponse }) signIns: SignInSeriesResponse;
}
