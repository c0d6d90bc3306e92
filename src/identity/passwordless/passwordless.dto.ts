import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PASSWORDLESS_TYPES, type PasswordlessType } from './passwordless.settings.js';
import { FRONTEND_URL } from '../verification/verification.settings.js';

const trimLower = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value);

// One address: `email` (sent by mail) or `mobile` (sent by SMS).
export class PasswordlessAddressInput {
  @ApiPropertyOptional({ example: 'ada@example.com', description: 'Sign in by email (send this or mobile).' })
  @IsOptional()
  @Transform(trimLower)
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ example: '+14155552671', description: 'Sign in by SMS (send this or email); normalized to E.164.' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  mobile?: string;
}

// The address, and the client application a link points to.
export class PasswordlessStartInput extends PasswordlessAddressInput {
  @ApiPropertyOptional({
    example: 'https://admin.example.com',
    description:
      'The client application the link points to (`{frontendUrl}/passwordlessLogin/{token}`): settings `verification.frontendUrl` or one of `verification.frontendUrls`, exactly, else `400 FrontendUrlNotAllowed`. Absent: `verification.frontendUrl`.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @Matches(FRONTEND_URL, { message: 'frontendUrl must be an http(s) address without query or fragment' })
  frontendUrl?: string;
}

// Either the address and its code, or the token of a link alone.
export class PasswordlessCompleteInput extends PasswordlessAddressInput {
  @ApiPropertyOptional({ example: '123456', description: 'The 6-digit code sent to the address (with email or mobile).' })
  @IsOptional()
  @IsString()
  @MaxLength(16)
  secretCode?: string;

  @ApiPropertyOptional({ description: 'The token of the link `{frontendUrl}/passwordlessLogin/{token}` (alone).' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,128}$/, { message: 'token must be the token of a sign-in link' })
  token?: string;
}

export class PasswordlessStartAnswer {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: 'integer', description: 'Which code of this address this is (1 for the first).' }) codeIndex: number;
  @ApiProperty({ type: 'integer', description: 'When the code was sent, in epoch milliseconds.' }) timeStamp: number;
  @ApiProperty({ format: 'date-time', description: 'The same instant as ISO text.' }) date: string;
  @ApiProperty({ type: 'integer', description: 'Seconds the code or link stays valid.' }) expireTime: number;
  @ApiProperty({ enum: PASSWORDLESS_TYPES }) verificationType: PasswordlessType;
  @ApiPropertyOptional({ description: 'The code, in `testMode` only (byCode, both).' }) secretCode?: string;
  @ApiPropertyOptional({ description: 'The link\'s token, in `testMode` only (byLink, both).' }) secretToken?: string;
}

export function toStartAnswer(
  issued: { codeIndex: number; sentAt: Date; code?: string; token?: string },
  expireTime: number,
  verificationType: PasswordlessType,
  testMode: boolean,
): PasswordlessStartAnswer {
  return {
    status: 'OK',
    codeIndex: issued.codeIndex,
    timeStamp: issued.sentAt.getTime(),
    date: issued.sentAt.toISOString(),
    expireTime,
    verificationType,
    ...(testMode && issued.code !== undefined && { secretCode: issued.code }),
    ...(testMode && issued.token !== undefined && { secretToken: issued.token }),
  };
}
