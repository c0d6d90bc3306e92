import { randomUUID } from 'node:crypto';
import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { SigningThread } from '../../platform/crypto/signing-thread.js';
import { acrOf, PENDING_ACR } from '../../kernel/assurance.js';
import type { SessionData } from '../../kernel/principal.js';
import { KeyService } from '../signing-key/key.service.js';
import { tokenAudience, type TokenAudience } from './token-audience.js';
import type { TokenClaims, TokenUse } from './token.types.js';

// Issues a session's RS256 access tokens (and bucket tokens, the same claims for the avatar
// bucket only), signed on the signing thread with the signing-key feature's current key.
@Injectable()
export class TokenIssuerService implements OnApplicationShutdown, OnModuleInit {
  private readonly signer: SigningThread;
  private readonly names: TokenAudience;

  constructor(
    private readonly keys: KeyService,
    private readonly clock: Clock,
    private readonly checks: BootChecks,
    private readonly config: AppConfig,
  ) {
    // Two signing threads on PostgreSQL. The embedded database runs its engine on a thread of this
    // process, which a second signing thread would compete with (bench:refresh-ab: refreshes per
    // second 1.05 to 1.07 times one thread's on PostgreSQL + Redis, 0.91 to 0.96 embedded).
    this.signer = new SigningThread(config.env.DATABASE_URL ? 2 : 1);
    this.names = tokenAudience(config);
  }

  // The standard claims (`iss`, `sub`, `aud`, `sid`, `jti`) beside the service's own, from the
  // session: who, and what the sign-in proved so far. `jti` and `issuedAt` are given when a token
  // must come out the same again (a refresh retried within its grace window): RS256 signs the
  // same claims with the same key to the same bytes. A bucket token has no `aud`, so a verifier
  // that checks the audience never takes it for access; nor has a token of an unfinished sign-in
  // (`acr: pending`), which serves only to finish it.
  async issue(session: SessionData, use: TokenUse, expiresAt: Date, opts: { jti?: string; issuedAt?: Date } = {}): Promise<string> {
    const claims = claimsOf(session, use);
    const key = await this.keys.signingKey();
    const iat = Math.floor((opts.issuedAt ?? this.clock.now()).getTime() / 1000);
    const pending = claims.acr === PENDING_ACR;
    const payload = {
      iss: this.names.issuer,
      sub: claims.userId,
      ...(claims.use === 'access' && !pending && this.names.audience && { aud: this.names.audience }),
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
}

// A token's claims from its session: who, and what the sign-in proved so far.
function claimsOf(session: SessionData, use: TokenUse): TokenClaims {
  return {
    sessionId: session.sessionId,
    userId: session.userId,
    storeId: session.storeId,
    use,
    acr: acrOf(session),
    amr: session.amr ?? [],
    ...(session.authTime && { authTime: Math.floor(Date.parse(session.authTime) / 1000) }),
  };
}

function base64url(json: object): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}
