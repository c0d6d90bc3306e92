import { ApiPropertyOptional } from '@nestjs/swagger';
import { SessionResponse } from '../session/index.js';

// A completed second factor: the session with fresh tokens (those of the pending sign-in said so,
// `acr: pending`, and finish it only).
export class SecondFactorDoneResponse extends SessionResponse {
  @ApiPropertyOptional({ description: 'A token for the avatar bucket, as login gives (the pending sign-in\'s one no longer serves).' }) userBucketToken?: string;
  @ApiPropertyOptional({ description: 'With `accessTokenMinutes` set: the next refresh token (the login\'s earlier one no longer works).' }) refreshToken?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'With `accessTokenMinutes` set: when the new access token expires.' }) accessTokenExpiresAt?: string;
}
