import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { SessionResponse } from '../session/index.js';
import { FRONTEND_URL } from './verification.settings.js';

const trimLower = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value);

// The identifier of the email and mobile flows.
export class VerificationAddressInput {
  @ApiPropertyOptional({ example: 'ada@example.com', description: 'For the email flows.' })
  @IsOptional()
  @Transform(trimLower)
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ example: '+14155552671', description: 'For the mobile flows; normalized to E.164.' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  mobile?: string;
}

// `start` of the email and mobile flows: the identifier to verify or to reset the password of,
// and the client application the link points to.
export class StartVerificationInput extends VerificationAddressInput {
  @ApiPropertyOptional({
    example: 'https://admin.example.com',
    description:
      'The client application a link points to (`{frontendUrl}/emailVerification/{token}` and the like): settings `verification.frontendUrl` or one of `verification.frontendUrls`, exactly, else `400 FrontendUrlNotAllowed`. Absent: `verification.frontendUrl`.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @Matches(FRONTEND_URL, { message: 'frontendUrl must be an http(s) address without query or fragment' })
  frontendUrl?: string;
}

export class CompleteVerificationInput extends VerificationAddressInput {
  @ApiProperty({ description: 'The 6-digit code, or the token of a link (then the identifier may be left out).' })
  @IsString()
  @MaxLength(128)
  secretCode: string;

  @ApiPropertyOptional({ description: 'The new password (password reset): 8 characters to 72 bytes.' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string;
}

export class CompleteSecondFactorInput {
  @ApiProperty({ description: 'The code (or link token) sent for this session.' })
  @IsString()
  @MaxLength(128)
  secretCode: string;
}

export class StartAnswer {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: 'integer', description: 'Which code of this address this is (1 for the first).' }) codeIndex: number;
  @ApiProperty({ type: 'integer', description: 'When the code was sent, in epoch milliseconds.' }) timeStamp: number;
  @ApiProperty({ format: 'date-time', description: 'The same instant as ISO text.' }) date: string;
  @ApiProperty({ type: 'integer', description: 'Seconds the code stays valid.' }) expireTime: number;
  @ApiProperty({ enum: ['byCode', 'byLink'] }) verificationType: 'byCode' | 'byLink';
  @ApiPropertyOptional({ description: 'The code itself, in `testMode` only.' }) secretCode?: string;
}

export class CompleteAnswer {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ enum: [true] }) isVerified: true;
  @ApiPropertyOptional({ description: 'The verified email (email flows).' }) email?: string;
  @ApiPropertyOptional({ description: 'The verified mobile (mobile flows).' }) mobile?: string;
}

export function toStartAnswer(issued: { codeIndex: number; sentAt: Date }, expireTime: number, verificationType: 'byCode' | 'byLink', secretCode?: string): StartAnswer {
  const sentAt = new Date(issued.sentAt);
  return {
    status: 'OK',
    codeIndex: issued.codeIndex,
    timeStamp: sentAt.getTime(),
    date: sentAt.toISOString(),
    expireTime,
    verificationType,
    ...(secretCode !== undefined && { secretCode }),
  };
}

