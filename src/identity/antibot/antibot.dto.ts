import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

// What the ALTCHA widget expects from its challenge URL.
export class AltchaChallengeResponse {
  @ApiProperty({ example: 'SHA-256' }) algorithm: string;
  @ApiProperty() challenge: string;
  @ApiPropertyOptional({ type: 'integer' }) maxnumber?: number;
  @ApiProperty() salt: string;
  @ApiProperty() signature: string;
}
