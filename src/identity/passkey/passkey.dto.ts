import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsNotEmpty, IsObject, IsOptional, IsString, IsUUID, MaxLength, ValidateNested } from 'class-validator';
import { SecondFactorDoneResponse } from '../token/index.js';
import type { PasskeyEntity } from './passkey.entity.js';

// What the browser's `PublicKeyCredential.toJSON()` gives (or @simplewebauthn/browser's
// startRegistration / startAuthentication, or a mobile platform's passkey API as JSON).
export class PublicKeyCredentialJson {
  @ApiProperty({ description: 'The credential id, base64url.' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1400)
  id: string;

  @ApiProperty({ description: 'The same id, base64url.' })
  @IsString()
  @MaxLength(1400)
  rawId: string;

  @ApiProperty({ enum: ['public-key'] })
  @IsIn(['public-key'])
  type: 'public-key';

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The authenticator\'s response, base64url fields: `clientDataJSON` and `attestationObject` (enrolment) or `authenticatorData`, `signature`, `userHandle` (sign-in).' })
  @IsObject()
  response: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['platform', 'cross-platform'] })
  @IsOptional()
  @IsIn(['platform', 'cross-platform'])
  authenticatorAttachment?: 'platform' | 'cross-platform';

  @ApiProperty({ type: 'object', additionalProperties: true })
  @IsObject()
  clientExtensionResults: Record<string, unknown>;
}

export class PasskeyRegisterInput {
  @ApiProperty({ type: PublicKeyCredentialJson, description: 'The result of `navigator.credentials.create()` with the options of `/passkeys/register/options`, as JSON.' })
  @ValidateNested()
  @Type(() => PublicKeyCredentialJson)
  response: PublicKeyCredentialJson;

  @ApiPropertyOptional({ example: 'MacBook Touch ID', maxLength: 100, description: '"Passkey" when absent.' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;
}

export class PasskeyLoginInput {
  @ApiProperty({ type: PublicKeyCredentialJson, description: 'The result of `navigator.credentials.get()` with the options of `/passkeys/login/options`, as JSON.' })
  @ValidateNested()
  @Type(() => PublicKeyCredentialJson)
  response: PublicKeyCredentialJson;
}

export class RenamePasskeyInput {
  @ApiProperty({ example: 'Work phone', maxLength: 100 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;
}

export class PasskeyIdParam {
  @IsUUID()
  id: string;
}

export class PasskeyResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) lastUsedAt: string | null;
  @ApiProperty({ type: [String], description: 'How the browser may reach the authenticator: internal, hybrid, usb, nfc, ble.' }) transports: string[];
  @ApiProperty({ description: 'Synced by its provider to the user\'s other devices.' }) backedUp: boolean;
}

export class PasskeyAnswer {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: PasskeyResponse }) passkey: PasskeyResponse;
}

export class PasskeyEnrolledAnswer extends PasskeyAnswer {
  @ApiPropertyOptional({ type: SecondFactorDoneResponse, description: 'Present when your role required this enrolment (`mfaEnrollmentNeeded`): the sign-in, now complete, with fresh tokens (the earlier ones served only to enrol).' })
  session?: SecondFactorDoneResponse;
}

export class PasskeyListResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: [PasskeyResponse] }) passkeys: PasskeyResponse[];
}

export class PasskeyDeletedResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ format: 'uuid' }) id: string;
}

class RelyingParty {
  @ApiProperty() name: string;
  @ApiProperty() id: string;
}

class WebAuthnUser {
  @ApiProperty({ description: 'The user handle, base64url.' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() displayName: string;
}

class CredentialDescriptor {
  @ApiProperty({ description: 'A credential id, base64url.' }) id: string;
  @ApiProperty({ enum: ['public-key'] }) type: 'public-key';
  @ApiPropertyOptional({ type: [String] }) transports?: string[];
}

// WebAuthn's PublicKeyCredentialCreationOptionsJSON: give it to
// `PublicKeyCredential.parseCreationOptionsFromJSON()` (or @simplewebauthn/browser's startRegistration).
export class PasskeyCreationOptions {
  @ApiProperty({ description: 'base64url; single use, 5 minutes.' }) challenge: string;
  @ApiProperty({ type: RelyingParty }) rp: RelyingParty;
  @ApiProperty({ type: WebAuthnUser }) user: WebAuthnUser;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } }) pubKeyCredParams: Record<string, unknown>[];
  @ApiPropertyOptional() timeout?: number;
  @ApiPropertyOptional({ type: [CredentialDescriptor], description: 'Your passkeys already enrolled: an authenticator holding one refuses to enrol again.' }) excludeCredentials?: CredentialDescriptor[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'residentKey preferred, userVerification required.' }) authenticatorSelection?: Record<string, unknown>;
  @ApiPropertyOptional() attestation?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) extensions?: Record<string, unknown>;
}

// WebAuthn's PublicKeyCredentialRequestOptionsJSON: give it to
// `PublicKeyCredential.parseRequestOptionsFromJSON()` (or @simplewebauthn/browser's startAuthentication).
export class PasskeyRequestOptions {
  @ApiProperty({ description: 'base64url; single use, 5 minutes.' }) challenge: string;
  @ApiProperty() rpId: string;
  @ApiPropertyOptional() timeout?: number;
  @ApiPropertyOptional({ type: [CredentialDescriptor], description: 'Empty: any passkey of this relying party (discoverable credentials, no username).' }) allowCredentials?: CredentialDescriptor[];
  @ApiPropertyOptional({ enum: ['required'] }) userVerification?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) extensions?: Record<string, unknown>;
}

export function toPasskeyResponse(p: PasskeyEntity): PasskeyResponse {
  return {
    id: p.id,
    name: p.name,
    createdAt: p.createdAt.toISOString(),
    lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
    transports: p.transports,
    backedUp: p.backedUp,
  };
}
