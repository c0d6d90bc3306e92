import { Injectable } from '@nestjs/common';
import { ApiKeyService } from '../apikey/api-key.service.js';
import { AuthenticationService } from '../auth/authentication.service.js';
import { AppError } from '../common/errors.js';
import type { ContextRequest } from '../common/request-context.js';
import type { SessionData } from '../session/session.types.js';
import { ROOT_CODENAME, type StoreEntity } from '../store/store.entity.js';
import { StoreService } from '../store/store.service.js';
import { SAAS_ROLES } from '../user/roles.js';
import type { Subscriber } from './event-access.service.js';

// What a connection presented: headers and query of its handshake or request, the store it
// named. Kept for the life of the stream, so the login can be checked again (logout elsewhere).
export interface Credentials {
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  // The targeted store codename, when the client named one.
  codename?: string;
}

export interface ConnectionPrincipal {
  store: StoreEntity;
  subscriber: Subscriber;
}

// Who is on the other end of a Socket.IO connection or an SSE stream, by the same rules as the
// HTTP routes: an API key is the credential where one is sent; a token counts only in its own
// store (a super administrator's in any); no credential at all is an anonymous subscriber.
@Injectable()
export class EventPrincipals {
  constructor(
    private readonly authentication: AuthenticationService,
    private readonly apiKeys: ApiKeyService,
    private readonly stores: StoreService,
  ) {}

  async authenticate(credentials: Credentials): Promise<ConnectionPrincipal> {
    let store = await this.stores.resolve(credentials.codename ?? ROOT_CODENAME);
    const req = { headers: credentials.headers, query: credentials.query, body: {}, ctx: { store } } as unknown as ContextRequest;

    const apiKey = this.authentication.apiKeyFrom(req);
    if (apiKey !== undefined) {
      const session = await this.apiKeys.authenticate(apiKey);
      if (session.storeId !== store.id) {
        if (credentials.codename !== undefined) throw new AppError('TenantMismatch', 'the API key belongs to another store');
        store = (await this.stores.findById(session.storeId)) ?? store;
      }
      return { store, subscriber: { storeId: store.id, session } };
    }
    if (!this.authentication.hasToken(req)) return { store, subscriber: { storeId: store.id } };
    const { session } = await this.authentication.authenticate(req);
    checkTenant(store, session);
    return { store, subscriber: { storeId: store.id, session } };
  }
}

function checkTenant(store: StoreEntity, session: SessionData): void {
  if (session.storeId !== store.id && !session.roles.includes(SAAS_ROLES.superAdmin)) {
    throw new AppError('TenantMismatch', 'the token was issued for another store');
  }
}
