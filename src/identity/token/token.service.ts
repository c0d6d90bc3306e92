import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { serviceUrl } from '../../platform/config/service-url.js';
import { SigningThread } from '../../platform/crypto/signing-thread.js';
import { AppError } from '../../kernel/errors.js';
import { KeyService } from './key.service.js';

export type TokenUse = 'access' | 'bucket';

export interface TokenClaims {
  sessionId: string;
  userId: string;
  storeId: string;
  use: TokenUse;
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
export class TokenService implements OnApplicationShutdown {
  private readonly verified = new Map<string, VerifiedToken>();
  private readonly signer: SigningThread;

  // The `iss` of every token (settings tokenIssuer, else the service's public address), and the
  // access tokens' `aud` when the settings name one.
  readonly issuer: string;
  private readonly audience?: string | string[];

  constructor(
    private readonly jwt: JwtService,
    private readonly keys: KeyService,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    // Two signing threads on PostgreSQL. The embedded database runs its engine on a thread of this
    // process, which a second signing thread would compete with (bench:refresh-ab: refreshes per
    // second 1.05 to 1.07 times one thread's on PostgreSQL + Redis, 0.91 to 0.96 embedded).
    this.signer = new SigningThread(config.env.DATABASE_URL ? 2 : 1);
    this.issuer = config.settings.tokenIssuer ?? `${serviceUrl(config.env)}/auth-api`;
    this.audience = config.settings.tokenAudience ?? undefined;
  }

  // The standard claims (`iss`, `sub`, `aud`, `sid`, `jti`) beside the service's own. `jti` and
  // `issuedAt` are given when a token must come out the same again (a refresh retried within
  // its grace window): RS256 signs the same claims with the same key to the same bytes. A bucket
  // token has no `aud`, so a verifier that checks the audience never takes it for access.
  async issue(claims: TokenClaims, expiresAt: Date, opts: { jti?: string; issuedAt?: Date } = {}): Promise<string> {
    const key = await this.keys.signingKey();
    const iat = Math.floor((opts.issuedAt ?? this.clock.now()).getTime() / 1000);
    const payload = {
      iss: this.issuer,
      sub: claims.userId,
      ...(claims.use === 'access' && this.audience && { aud: this.audience }),
      sid: claims.sessionId,
      jti: opts.jti ?? randomUUID(),
      sessionId: claims.sessionId,
      userId: claims.userId,
      storeId: claims.storeId,
      use: claims.use,
      iat,
      exp: Math.floor(expiresAt.getTime() / 1000),
    };
    // Signed here rather than through JwtService: the claims are built above, so its option and
    // payload checks had nothing to find, and it signs on the event loop. The bytes are the ones
    // it produced (same header, same claim order).
    const input = `${base64url({ alg: 'RS256', typ: 'JWT', kid: key.kid })}.${base64url(payload)}`;
    return `${input}.${await this.signer.sign(input, key.privateKeyObject)}`;
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
    const { sessionId, userId, storeId, use, exp, iat } = claims;
    if (![sessionId, userId, storeId].every((v) => typeof v === 'string' && UUID.test(v)) || (use !== 'access' && use !== 'bucket') || typeof exp !== 'number') {
      throw invalidToken();
    }
    const valid: VerifiedToken = { claims: { sessionId, userId, storeId, use } as TokenClaims, kid, exp, iat: typeof iat === 'number' ? iat : 0 };
    if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, valid);
    return valid;
  }
}

function base64url(json: object): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

function invalidToken(): AppError {
  return new AppError('Unauthorized', 'invalid or expired token');
}
