import type { Acr } from '../../kernel/assurance.js';

export type TokenUse = 'access' | 'bucket';

export interface TokenClaims {
  sessionId: string;
  userId: string;
  storeId: string;
  use: TokenUse;
  // What the sign-in proved (kernel/assurance.ts): `acr` `pending` marks a token of an unfinished
  // sign-in, which carries no `aud` and no `auth_time`. Absent in tokens of earlier builds.
  acr?: Acr;
  amr?: string[];
  // seconds since the epoch
  authTime?: number;
}

export interface VerifiedToken {
  claims: TokenClaims;
  kid: string;
  // seconds since the epoch, as the token's `exp` and `iat`
  exp: number;
  iat: number;
}

// What a login (or a refresh) hands the client.
export interface LoginTokens {
  accessToken: string;
  accessTokenExpiresAt: Date;
  sessionExpiresAt: Date;
  // At login only: a token for the avatar bucket, living as long as the session.
  userBucketToken?: string;
  // With accessTokenMinutes: the opaque token that gets the next pair.
  refreshToken?: string;
}
