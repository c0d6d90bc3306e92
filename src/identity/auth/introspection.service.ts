import { Injectable } from '@nestjs/common';
import { acrOf, PENDING_ACR, signInPending } from '../../kernel/assurance.js';
import { AppError } from '../../kernel/errors.js';
import type { Principal, SessionData } from '../../kernel/principal.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { ApiKeyService } from '../apikey/api-key.service.js';
import { SessionService } from '../session/session.service.js';
import { StoreService } from '../store/store.service.js';
import { RefreshTokenService } from '../token/refresh-token.service.js';
import { TokenVerifierService } from '../token/token-verifier.service.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

export type TokenTypeHint = 'access_token' | 'refresh_token' | 'api_key';

export interface Introspection {
  active: boolean;
  sub?: string;
  sid?: string;
  storeId?: string;
  storeCodename?: string;
  roleId?: string | string[];
  exp?: number;
  iat?: number;
  token_type?: TokenTypeHint;
  acr?: string;
  amr?: string[];
  auth_time?: number;
}

const INACTIVE: Introspection = { active: false };

interface Found {
  session: SessionData;
  exp: number;
  iat?: number;
  pending: boolean;
}

// RFC 7662 for backend services: is this token live, and whose is it. Access tokens and API keys
// are answered from the session and key caches, as `/currentuser` is. An API key of a store's
// administrator sees its own store's tokens only; a calling service and the SaaS level's
// administrators see every store's.
@Injectable()
export class IntrospectionService {
  constructor(
    private readonly tokens: TokenVerifierService,
    private readonly refreshTokens: RefreshTokenService,
    private readonly sessions: SessionService,
    private readonly apiKeys: ApiKeyService,
    private readonly stores: StoreService,
    private readonly config: AppConfig,
  ) {}

  async introspect(caller: Principal, token: string, hint?: TokenTypeHint): Promise<Introspection> {
    const kinds: TokenTypeHint[] = ['access_token', 'api_key', 'refresh_token'];
    // The hint is tried first; the others still answer (RFC 7662 §2.1).
    if (hint) kinds.sort((a, b) => Number(b === hint) - Number(a === hint));
    for (const kind of kinds) {
      const found = await this.find(kind, token);
      // A token of an unfinished sign-in (or one issued while it was) proves nothing yet.
      if (found) return this.maySee(caller, found.session.storeId) && !found.pending ? this.describe(kind, found) : INACTIVE;
    }
    return INACTIVE;
  }

  private async find(kind: TokenTypeHint, token: string): Promise<Found | undefined> {
    if (kind === 'access_token') {
      if (token.split('.').length !== 3) return undefined;
      const verified = await this.tokens.inspect(token).catch(passUnauthorized);
      if (!verified || verified.claims.use !== 'access') return undefined;
      const session = await this.sessions.get(verified.claims.storeId, verified.claims.sessionId);
      if (session?.userId !== verified.claims.userId) return undefined;
      return { session, exp: verified.exp, iat: verified.iat, pending: verified.claims.acr === PENDING_ACR || signInPending(session) };
    }
    if (kind === 'api_key') {
      const session = await this.apiKeys.authenticate(token).catch(passUnauthorized);
      return session && { session, exp: seconds(new Date(session.expiresAt)), pending: false };
    }
    const found = await this.refreshTokens.inspect(token);
    return found && { session: found.session, exp: seconds(found.row.expiresAt), iat: seconds(found.row.createdAt), pending: signInPending(found.session) };
  }

  private maySee(caller: Principal, storeId: string): boolean {
    return caller.kind === 'machine' || caller.storeId === storeId || caller.roles.some((r) => r === SAAS_ROLES.superAdmin || r === SAAS_ROLES.saasAdmin);
  }

  private async describe(kind: TokenTypeHint, found: Found): Promise<Introspection> {
    const { session } = found;
    const store = await this.stores.findById(session.storeId);
    if (!store?.isActive) return INACTIVE;
    return {
      active: true,
      sub: session.userId,
      sid: session.sessionId,
      storeId: session.storeId,
      storeCodename: store.codename,
      roleId: this.config.section(TenancySection).usersHaveMultipleRoles ? session.roles : session.roles[0],
      exp: found.exp,
      ...(found.iat !== undefined && { iat: found.iat }),
      token_type: kind,
      // What the sign-in proved (an API key proves no sign-in).
      ...(session.principal !== 'apiKey' && {
        acr: acrOf(session),
        amr: session.amr ?? [],
        ...(session.authTime && { auth_time: seconds(new Date(session.authTime)) }),
      }),
    };
  }
}

function seconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

// A token that does not authenticate is not active; any other failure (an outage) is the answer.
function passUnauthorized(error: unknown): undefined {
  if (error instanceof AppError && error.status === 401) return undefined;
  throw error;
}
