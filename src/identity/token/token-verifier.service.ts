import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { AppError } from '../../kernel/errors.js';
import { PENDING_ACR, type Acr } from '../../kernel/assurance.js';
import { KeyService } from '../signing-key/key.service.js';
import { tokenAudience, type TokenAudience } from './token-audience.js';
import type { TokenClaims, VerifiedToken } from './token.types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Tokens whose signature was verified, by their exact text: the same bytes verify the same way, so
// a repeat skips the RSA check (the costliest step of an authenticated request). Expiry and the
// key's validity are still checked on every use; the oldest entry goes first when full.
const VERIFIED_MAX = 5000;

// Verifies access and bucket tokens. Verification pins the algorithm, requires a known live `kid`
// and reads time from the Clock.
@Injectable()
export class TokenVerifierService {
  private readonly verified = new Map<string, VerifiedToken>();
  private readonly names: TokenAudience;

  constructor(
    private readonly jwt: JwtService,
    private readonly keys: KeyService,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.names = tokenAudience(config);
  }

  // The `iss` tokens of this service carry (the discovery document publishes it).
  get issuer(): string {
    return this.names.issuer;
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
    if (this.names.issuerConfigured && claims.iss !== this.names.issuer) throw invalidToken();
    // A finished sign-in's access token is for this audience; an unfinished one names none.
    if (this.names.audience && use === 'access' && acr !== PENDING_ACR && !audienceMatches(claims.aud, this.names.audience)) throw invalidToken();
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

function invalidToken(): AppError {
  return new AppError('Unauthorized', 'invalid or expired token');
}
