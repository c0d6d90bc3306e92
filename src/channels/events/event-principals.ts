import { Injectable } from '@nestjs/common';
import { ApiKeyService } from '../../identity/apikey/api-key.service.js';
import { AuthenticationService } from '../../identity/auth/authentication.service.js';
import { AppError } from '../../kernel/errors.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { SessionData } from '../../kernel/principal.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { StoreService } from '../../identity/store/store.service.js';
import { refuseTargetingWhenSingle } from '../../identity/tenancy/tenancy.middleware.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import { VerificationGate } from '../../identity/verification/verification.gate.js';
import type { Subscriber } from './event-access.service.js';

// What a connection presented: headers and query of its handshake or request, the store it
// named. Kept for the life of the stream, so the login can be checked again (logout elsewhere).
export interface Credentials {
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  // The targeted store codename, when the client named one.
  codename?: string;
  // The route a pending second factor's message names (`errMsg_<route>RequiresEmail2FA`).
  route: { method: string; path: string };
}

export interface ConnectionPrincipal {
  store: Tenant;
  subscriber: Subscriber;
}

// Who is on the other end of a Socket.IO connection or an SSE stream, by the same rules as the
// HTTP routes: an API key is the credential where one is sent; a token counts only in its own
// store (a super administrator's in any); no credential at all is an anonymous subscriber.
// A deactivated store opens no stream, and a login with a second factor pending holds none.
@Injectable()
export class EventPrincipals {
  constructor(
    private readonly authentication: AuthenticationService,
    private readonly apiKeys: ApiKeyService,
    private readonly stores: StoreService,
    private readonly verification: VerificationGate,
    private readonly config: AppConfig,
  ) {}

  async authenticate(credentials: Credentials): Promise<ConnectionPrincipal> {
    // As on HTTP: a single-tenant deployment refuses a named store (`root` aside).
    refuseTargetingWhenSingle(this.config.settings.tenancy, credentials.codename);
    let store = await this.stores.resolve(credentials.codename ?? ROOT_CODENAME);
    const req = { headers: credentials.headers, query: credentials.query, body: {}, ctx: { store } } as unknown as ContextRequest;

    const apiKey = this.authentication.apiKeyFrom(req);
    if (apiKey !== undefined) {
      const session = await this.apiKeys.authenticate(apiKey);
      if (session.storeId !== store.id) {
        if (credentials.codename !== undefined) throw new AppError('TenantMismatch', 'the API key belongs to another store');
        store = (await this.stores.findById(session.storeId)) ?? store;
      }
      assertActive(store);
      return { store, subscriber: { storeId: store.id, session } };
    }
    if (!this.authentication.hasToken(req)) {
      assertActive(store);
      return { store, subscriber: { storeId: store.id } };
    }
    const { session, pending } = await this.authentication.authenticate(req);
    checkTenant(store, session);
    assertActive(store);
    // As on HTTP, the login's own store too (a super administrator's, when it targets another).
    const own = session.storeId === store.id ? store : await this.stores.findById(session.storeId);
    if (!own?.isActive) throw new AppError('StoreInactive', 'the store of this login is deactivated');
    // API keys (above) have no second factor.
    this.verification.checkRequest(session, credentials.route, {}, pending);
    return { store, subscriber: { storeId: store.id, session } };
  }
}

// The store whose events the stream would carry.
function assertActive(store: Tenant): void {
  if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);
}

function checkTenant(store: Tenant, session: SessionData): void {
  if (session.storeId !== store.id && !session.roles.includes(SAAS_ROLES.superAdmin)) {
    throw new AppError('TenantMismatch', 'the token was issued for another store');
  }
}
