import { Injectable } from '@nestjs/common';
import { CallerResolver, type CallerCredentials, type CallerRules } from '../../identity/auth/caller-resolver.js';
import { USER_OR_API_KEY } from '../../kernel/policy.js';
import type { Tenant } from '../../kernel/tenant.js';
import type { Subscriber } from './event-access.service.js';

export interface ConnectionPrincipal {
  store: Tenant;
  subscriber: Subscriber;
}

// What the event channel asks of a connecting caller, beside what every HTTP route asks: a login
// or an API key, or no credential at all (an anonymous subscriber, public topics only); no
// machine tokens (they sign one HTTP request). A deactivated store opens no stream, whoever
// connects; a refusal of another store's token names no header to send.
const SUBSCRIBERS: CallerRules = { principals: USER_OR_API_KEY, anonymous: true, targetActive: true, bareTenantMismatch: true };

// Who is on the other end of a Socket.IO connection or an SSE stream: the CallerResolver's
// answer, by the HTTP routes' rules, as the subscriber the channel's topics are decided for.
@Injectable()
export class EventPrincipals {
  constructor(private readonly callers: CallerResolver) {}

  async authenticate(credentials: CallerCredentials): Promise<ConnectionPrincipal> {
    const { store, session } = await this.callers.resolve(credentials, SUBSCRIBERS);
    return { store, subscriber: session ? { storeId: store.id, session } : { storeId: store.id } };
  }
}
