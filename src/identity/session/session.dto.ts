import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { PageInfo } from '../../kernel/paging.js';
import type { SessionData } from '../../kernel/principal.js';
import type { SessionEntity } from './session.entity.js';
import { describeDevice } from './user-agent.js';

const ROLE_ID = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description: 'A role, or the list of roles when `usersHaveMultipleRoles`.' };

// The spec's session object, as documented (/currentuser, a completed second factor; login's
// answer adds its tokens).
export class SessionResponse {
  @ApiProperty({ format: 'uuid' }) sessionId: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ type: 'string', nullable: true }) email: string | null;
  @ApiPropertyOptional({ description: 'E.164, when the user has one.' }) mobile?: string;
  @ApiProperty({ type: 'string', nullable: true }) fullname: string | null;
  @ApiProperty(ROLE_ID) roleId: string | string[];
  @ApiProperty({ format: 'uuid', description: 'The store the session belongs to.' }) tenantId: string;
  @ApiPropertyOptional({ description: 'The JWT to send as `Authorization: Bearer`; absent when the caller used an API key.' }) accessToken?: string;
  @ApiPropertyOptional({ enum: [true], description: 'Present while an email second factor is pending.' }) sessionNeedsEmail2FA?: boolean;
  @ApiPropertyOptional({ enum: [true], description: 'Present while a mobile second factor is pending.' }) sessionNeedsMobile2FA?: boolean;
  @ApiPropertyOptional({ enum: [true], description: 'Present while the authenticator-app factor is pending: `POST /auth-api/mfa/totp/verify` or `/auth-api/mfa/recovery` completes it (or a passkey, when `sessionNeedsPasskey2FA` is present too).' }) sessionNeedsTotp2FA?: boolean;
  @ApiPropertyOptional({ enum: [true], description: 'Present while a passkey of the user may complete the pending sign-in: `POST /auth-api/passkeys/2fa/options`, then `/auth-api/passkeys/2fa/verify`. With `sessionNeedsTotp2FA` too, either factor completes it.' }) sessionNeedsPasskey2FA?: boolean;
  @ApiPropertyOptional({ enum: [true], description: 'Present while the user\'s role requires an app factor (`mfaRequiredForRoles`) it has not enrolled: only the enrolment routes answer.' }) mfaEnrollmentNeeded?: boolean;
}

export interface SessionView {
  multipleRoles: boolean;
}

// The spec's session object. `userBucketToken` is given at login only; an API key's session
// has no access token. The 2FA flags are there only while a factor is pending.
export function toSessionResponse(session: SessionData, view: SessionView, accessToken?: string, userBucketToken?: string) {
  return {
    sessionId: session.sessionId,
    userId: session.userId,
    email: session.email,
    ...(session.mobile && { mobile: session.mobile }),
    fullname: session.fullname,
    roleId: view.multipleRoles ? session.roles : session.roles[0],
    tenantId: session.storeId,
    ...(session.ssoUserId && { SSOUserId: session.ssoUserId }),
    ...(accessToken && { accessToken }),
    ...(userBucketToken && { userBucketToken }),
    ...(session.sessionNeedsEmail2FA && { sessionNeedsEmail2FA: true }),
    ...(session.sessionNeedsMobile2FA && { sessionNeedsMobile2FA: true }),
    ...(session.sessionNeedsTotp2FA && { sessionNeedsTotp2FA: true }),
    ...(session.sessionNeedsPasskey2FA && { sessionNeedsPasskey2FA: true }),
    ...(session.mfaEnrollmentNeeded && { mfaEnrollmentNeeded: true }),
  };
}

// A user's sessions (/auth-api/sessions, /auth-api/v1/users/:id/sessions): the list, and how
// many a deletion ended.
export class SessionIdParam {
  @IsUUID()
  id: string;
}

export class SessionDevice {
  @ApiProperty({ type: 'string', nullable: true, example: 'Chrome 124', description: 'Browser and major version, when the user agent names them.' }) browser: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'Windows 10', description: 'Operating system and version, when the user agent names them.' }) os: string | null;
  @ApiProperty({ example: 'mobile', description: '`desktop`, `mobile`, `tablet`, `smarttv`, `console`, `wearable`, `embedded`, ...; `desktop` when the user agent names none.' }) type: string;
}

export class SessionListItem {
  @ApiProperty({ format: 'uuid' }) sessionId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time', description: 'When the session last made a request (to the minute); its creation until then.' }) lastSeenAt: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'The client address at login (behind a proxy: as TRUST_PROXY allows).' }) ip: string | null;
  @ApiProperty({ type: 'string', nullable: true }) userAgent: string | null;
  @ApiProperty({ type: SessionDevice, description: 'The device, read from the user agent.' }) device: SessionDevice;
  @ApiProperty({ description: 'The session of this request.' }) current: boolean;
}

export class SessionListResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: [SessionListItem] }) sessions: SessionListItem[];
  @ApiProperty({ type: PageInfo }) paging: PageInfo;
}

export class SessionsEndedResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty({ type: 'integer', description: 'How many sessions ended.' }) ended: number;
}

// `currentId`: the caller's session, marked `current` when it is in the list.
export function toSessionListItem(row: SessionEntity, currentId: string | undefined) {
  return {
    sessionId: row.id,
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt ?? row.createdAt,
    expiresAt: row.expiresAt,
    ip: row.ip,
    userAgent: row.userAgent,
    device: describeDevice(row.userAgent),
    current: row.id === currentId,
  };
}
