import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { Clock } from '../clock/clock.js';
import { AppError } from '../common/errors.js';
import { KeyService } from './key.service.js';

export type TokenUse = 'access' | 'bucket';

export interface TokenClaims {
  sessionId: string;
  userId: string;
  storeId: string;
  use: TokenUse;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// RS256 access tokens (and bucket tokens, the same claims for the avatar bucket only).
// Verification pins the algorithm, requires a known live `kid` and reads time from the Clock.
@Injectable()
export class TokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly keys: KeyService,
    private readonly clock: Clock,
  ) {}

  async issue(claims: TokenClaims, expiresAt: Date): Promise<string> {
    const key = await this.keys.signingKey();
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    return this.jwt.signAsync(
      { sessionId: claims.sessionId, userId: claims.userId, storeId: claims.storeId, use: claims.use, iat, exp: Math.floor(expiresAt.getTime() / 1000) },
      { algorithm: 'RS256', privateKey: key.privateKeyObject, keyid: key.kid },
    );
  }

  // The claims of a valid token, or 401.
  async verify(token: string): Promise<TokenClaims> {
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
    const { sessionId, userId, storeId, use } = claims;
    if (![sessionId, userId, storeId].every((v) => typeof v === 'string' && UUID.test(v)) || (use !== 'access' && use !== 'bucket')) {
      throw invalidToken();
    }
    return { sessionId, userId, storeId, use } as TokenClaims;
  }
}

function invalidToken(): AppError {
  return new AppError('Unauthorized', 'invalid or expired token');
}
