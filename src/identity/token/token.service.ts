import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { serviceUrl } from '../../platform/config/service-url.js';
import { SigningThread } from '../../platform/crypto/signing-thread.js';
import { AppError } from '../../kernel/errors.js';
import { KeyService } from '../signing-key/key.service.js';
import { PENDING_ACR, type Acr } from '../../kernel/assurance.js';
import { TokenSection } from './token.settings.js';

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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Tokens whose signature was verified, by their exact text: the same bytes verify the same way, so
// a repeat skips the RSA check (the costliest step of an authenticated request). Expiry and the
// key's validity are still checked on every use; the oldest entry goes first when full.
const VERIFIED_MAX = 5000;

export interface VerifiedToken {
  claims: TokenClaims;
  kid: string;
  // seconds since the epoch, as the token's `exp` and `iat`
  exp: number;
  iat: number;
}

// RS256 access tokens (and bucket tokens, the same claims for the avatar bucket only), signed on
// the signing thread. Verification pins the algorithm, requires a known live `kid` and reads time
// from the Clock.
@Injectable()
export class TokenService implements OnApplicationShutdown, OnModuleInit {
  private readonly verified = new Map<string, VerifiedToken>();
  private readonly signer: SigningThread;

  // The `iss` of every token (settings tokenIssuer, else the service's public address), and the
  // access tokens' `aud` when the settings name one. A token must carry both to be accepted here
  // when they are configured (tokenIssuer or PUBLIC_URL; tokenAudience): another deployment
  // signing with the same keys (one database) issues for another issuer or audience.
  readonly issuer: string;
  private readonly audience?: string | string[];
  private readonly issuerConfigured: boolean;

  constructor(
    private readonly jwt: JwtService,
    private readonly keys: KeyService,
    private readonly clock: Clock,
    private readonly checks: BootChecks,
    private readonly config: AppConfig,
  ) {
    // Two signing threads on PostgreSQL. The embedded database runs its engine on a thread of this
    // process, which a second signing thread would compete with (bench:refresh-ab: refreshes per
    // second 1.05 to 1.07 times one thread's on PostgreSQL + Redis, 0.91 to 0.96 embedded).
    this.signer = new SigningThread(config.env.DATABASE_URL ? 2 : 1);
    this.issuer = config.section(TokenSection).tokenIssuer ?? `${serviceUrl(config.env)}/auth-api`;
    this.audience = config.section(TokenSection).tokenAudience ?? undefined;
    this.issuerConfigured = !!(config.section(TokenSection).tokenIssuer || config.env.PUBLIC_URL);
  }

  // The standard claims (`iss`, `sub`, `aud`, `sid`, `jti`) beside the service's own. `jti` and
  // `issuedAt` are given when a token must come out the same again (a refresh retried within
  // its grace window): RS256 signs the same claims with the same key to the same bytes. A bucket
  // token has no `aud`, so a verifier that checks the audience never takes it for access; nor has
  // a token of an unfinished sign-in (`acr: pending`), which serves only to finish it.
  async issue(claims: TokenClaims, expiresAt: Date, opts: { jti?: string; issuedAt?: Date } = {}): Promise<string> {
    const key = await this.keys.signingKey();
    const iat = Math.floor((opts.issuedAt ?? this.clock.now()).getTime() / 1000);
    const pending = claims.acr === PENDING_ACR;
    const payload = {
      iss: this.issuer,
      sub: claims.userId,
      ...(claims.use === 'access' && !pending && this.audience && { aud: this.audience }),
      sid: claims.sessionId,
      jti: opts.jti ?? randomUUID(),
      sessionId: claims.sessionId,
      userId: claims.userId,
      storeId: claims.storeId,
      use: claims.use,
      ...(claims.acr && { acr: claims.acr }),
      ...(claims.amr && { amr: claims.amr }),
      ...(!pending && claims.authTime !== undefined && { auth_time: claims.authTime }),
      iat,
      exp: Math.floor(expiresAt.getTime() / 1000),
    };
    // Signed here rather than through JwtService: the claims are built above, so its option and
    // payload checks had nothing to find, and it signs on the event loop. The bytes are the ones
    // it produced (same header, same claim order).
    const input = `${base64url({ alg: 'RS256', typ: 'JWT', kid: key.kid })}.${base64url(payload)}`;
    return `${input}.${await this.signer.sign(input, key.privateKeyObject)}`;
  }

  // In production the tokens' issuer and the discovery document's addresses come from PUBLIC_URL:
  // the listening address names no host a client or verifier elsewhere reaches.
  onModuleInit(): void {
    if (this.config.env.NODE_ENV === 'production' && !this.config.env.PUBLIC_URL) {
      this.checks.report(['PUBLIC_URL must be set in production: the tokens\' issuer and the discovery document (jwks_uri, introspection_endpoint) are built from it']);
    }
  }

  onApplicationShutdown(): Promise<void> {
    return this.signer.close();
  }

  // The claims of a valid token, or 401.
  async verify(token: string): Promise<TokenClaims> {
    return (await this.inspect(token)).claims;
  }

  // A token this process verified before, checked for expiry and its key's validity without
  // waiting (what nearly every authenticated request asks): 401 when either is over, undefined
  // when the token must be verified first (inspect()). Its key is held: verifying it read the key.
  verifiedBefore(token: string): VerifiedToken | undefined {
    const known = this.verified.get(token);
    if (!known) return undefined;
    const keyValid = this.keys.stillVerifies(known.kid);
    if (keyValid === undefined) return undefined;
    if (keyValid && known.exp > this.clock.now().getTime() / 1000) return known;
    this.verified.delete(token);
    throw invalidToken();
  }

  // A valid token's claims with its times, or 401.
  async inspect(token: string): Promise<VerifiedToken> {
    const known = this.verifiedBefore(token);
    if (known) return known;
    const decoded = this.jwt.decode<{ header?: { alg?: unknown; kid?: unknown } } | null>(token, { complete: true });
    const kid = decoded?.header?.kid;
    if (decoded?.header?.alg !== 'RS256' || typeof kid !== 'string' || !UUID.test(kid)) throw invalidToken();
    const key = await this.keys.verificationKey(kid);
    if (!key) throw invalidToken();
    let claims: Record<string, unknown>;
    try {
      claims = await this.jwt.verifyAsync(token, {
        // jsonwebtoken takes a KeyObject as is (the option's type names only PEM text)
        publicKey: key.publicKeyObject as unknown as string,
        algorithms: ['RS256'],
        clockTimestamp: Math.floor(this.clock.now().getTime() / 1000),
      });
    } catch {
      throw invalidToken();
    }
    const { sessionId, userId, storeId, use, exp, iat, acr, amr, auth_time } = claims;
    if (![sessionId, userId, storeId].every((v) => typeof v === 'string' && UUID.test(v)) || (use !== 'access' && use !== 'bucket') || typeof exp !== 'number') {
      throw invalidToken();
    }
    if (this.issuerConfigured && claims.iss !== this.issuer) throw invalidToken();
    // A finished sign-in's access token is for this audience; an unfinished one names none.
    if (this.audience && use === 'access' && acr !== PENDING_ACR && !audienceMatches(claims.aud, this.audience)) throw invalidToken();
    const valid: VerifiedToken = {
      claims: {
        sessionId,
        userId,
        storeId,
        use,
        ...(typeof acr === 'string' && { acr: acr as Acr }),
        ...(Array.isArray(amr) && { amr: amr.filter((m): m is string => typeof m === 'string') }),
        ...(typeof auth_time === 'number' && { authTime: auth_time }),
      } as TokenClaims,
      kid,
      exp,
      iat: typeof iat === 'number' ? iat : 0,
    };
    if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, valid);
    return valid;
  }
}

// One of the audiences configured is among the token's (one, or a list).
function audienceMatches(aud: unknown, expected: string | string[]): boolean {
  const has = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  return (Array.isArray(expected) ? expected : [expected]).some((a) => has.includes(a));
}

function base64url(json: object): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

function invalidToken(): AppError {
  return new AppError('Unauthorized', 'invalid or expired token');
}
