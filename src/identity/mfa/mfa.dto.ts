import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SecondFactorDoneResponse } from '../token/index.js';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

// A current code of the authenticator app.
export class TotpCodeInput {
  @ApiProperty({ example: '123456', description: 'The 6 digits the app shows now.' })
  @IsString()
  @Matches(/^\s*\d{6}\s*$/, { message: 'code must be the 6 digits the authenticator app shows' })
  code: string;
}

export class RecoveryCodeInput {
  @ApiProperty({ example: 'k7q2-m9xd-4hfa', description: 'One of the recovery codes shown at enrolment (dashes and case do not matter).' })
  @IsString()
  @MaxLength(64)
  code: string;
}

// Disabling the app: a current code, or the password.
export class DisableTotpInput {
  @ApiProperty({ required: false, example: '123456' })
  @IsOptional()
  @IsString()
  @Matches(/^\s*\d{6}\s*$/, { message: 'code must be the 6 digits the authenticator app shows' })
  code?: string;

  @ApiProperty({ required: false })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  password?: string;
}

export class TotpSetupResponse {
  @ApiProperty({ example: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', description: 'The 160-bit secret in base32, for typing into the app; shown until the setup is confirmed.' }) secret: string;
  @ApiProperty({ example: 'otpauth://totp/Store:ada%40example.com?issuer=Store&secret=...&algorithm=SHA1&digits=6&period=30', description: 'The key URI: a mobile app opens it (deep link) or a QR code carries it.' }) otpauthUrl: string;
  @ApiProperty({ description: 'The key URI as a QR code, an SVG document, for a web page to show.' }) qrCodeSvg: string;
}

export class RecoveryCodesResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: [String], example: ['k7q2-m9xd-4hfa'], description: '10 single-use codes, shown this once: the user keeps them somewhere safe.' }) recoveryCodes: string[];
}

export class TotpConfirmedResponse extends RecoveryCodesResponse {
  @ApiPropertyOptional({ type: SecondFactorDoneResponse, description: 'Present when your role required this enrolment (`mfaEnrollmentNeeded`): the sign-in, now complete, with fresh tokens (the earlier ones served only to enrol).' })
  session?: SecondFactorDoneResponse;
}

export class MfaFactorsResponse {
  @ApiProperty({ description: 'An authenticator app is enabled.' }) totp: boolean;
  @ApiProperty({ type: 'integer', description: 'How many passkeys the user has.' }) passkeys: number;
  @ApiProperty({ type: 'integer', description: 'Recovery codes not used yet.' }) recoveryCodesLeft: number;
}

export class MfaStatusResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
}
