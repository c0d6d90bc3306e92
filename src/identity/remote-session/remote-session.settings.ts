import { Type } from 'class-transformer';
import { Allow, ArrayMinSize, IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateIf, ValidateNested } from 'class-validator';
import type { SecretSetting } from '../../platform/config/secrets.js';

const HTTP_URL = /^https?:\/\/[^\s/]+(\/[^\s]*)?$/;
// A dot path into an object: `sid`, `data.session`.
const DOT_PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

// Bearer tokens issued by a remote service, honoured while that service says their session is
// live (settings key `remoteSession`; null or `enabled: false` when not used). Every field but
// the optional ones is required once enabled, so a half-written block stops the boot.
export class RemoteSessionSettings {
  @IsBoolean()
  enabled: boolean;

  // The remote tokens' `iss`: how they are told apart from this service's own, and checked.
  @ValidateIf((o: RemoteSessionSettings) => o.enabled)
  @IsString()
  @MinLength(1, { message: 'issuer is required' })
  issuer: string;

  // Checked against the tokens' `aud` when set.
  @IsOptional()
  @IsString()
  audience?: string;

  // The remote service's public keys (JSON Web Key Set).
  @ValidateIf((o: RemoteSessionSettings) => o.enabled)
  @Matches(HTTP_URL, { message: 'jwksUrl must be an http(s) URL' })
  jwksUrl: string;

  // Where the session id is in the verified token's claims.
  @ValidateIf((o: RemoteSessionSettings) => o.enabled)
  @Matches(DOT_PATH, { message: 'sessionIdPath must be a dot path such as "sid"' })
  sessionIdPath: string;

  // The remote session endpoint; `{sessionId}` in it is replaced by the session id.
  @ValidateIf((o: RemoteSessionSettings) => o.enabled)
  @Matches(HTTP_URL, { message: 'requestUrl must be an http(s) URL' })
  requestUrl: string;

  // GET: the id goes in the address (`{sessionId}` required); POST: also as `{ "sessionId": … }`.
  @ValidateIf((o: RemoteSessionSettings) => o.enabled)
  @IsIn(['GET', 'POST'], { message: 'method must be GET or POST' })
  method: 'GET' | 'POST';

  // Where the session is in the answer's JSON body (`data.session`); the whole body when absent.
  @IsOptional()
  @Matches(DOT_PATH, { message: 'sessionLocation must be a dot path such as "data.session"' })
  sessionLocation?: string;

  // Where the user's email is in the session: the local account with that email is the user.
  @IsOptional()
  @Matches(DOT_PATH, { message: 'emailPath must be a dot path such as "user.email"' })
  emailPath?: string;

  // Stores (codenames) whose users the remote service signs in; anywhere else its tokens are refused.
  @ValidateIf((o: RemoteSessionSettings) => o.enabled)
  @IsString({ each: true })
  @ArrayMinSize(1, { message: 'stores must name at least one store codename' })
  stores: string[];

  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(30_000)
  timeoutMs?: number;

  // How long an answer of the remote service is reused for the same session.
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(60)
  cacheSeconds?: number;

  // Sent with every session request; values may be `{ "env": NAME }`.
  @IsOptional()
  @Allow()
  headers?: Record<string, SecretSetting>;
}

// A remote service's tokens and sessions.
export class RemoteSessionSection {
  // Bearer tokens of a remote service and its sessions (remote-session.settings.ts), or null.
  @IsOptional()
  @ValidateNested()
  @Type(() => RemoteSessionSettings)
  remoteSession: RemoteSessionSettings | null;
}
