import { Injectable } from '@nestjs/common';
import { AuditLog, auditActor, type AuditActor, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import type { PageQuery, PageRequest } from '../../kernel/paging.js';
import type { SessionData } from '../../kernel/principal.js';
import { mayManage } from '../../kernel/roles.js';
import type { Tenant } from '../../kernel/tenant.js';
import { Clock } from '../../platform/clock/clock.js';
import { Transactions } from '../../platform/database/transactions.js';
import { OAuthClientService } from '../oauth-client/index.js';
import { UserService } from '../user/user.service.js';
import { grantScopes, toOAuthConsentResponse, type OAuthConsentResponse } from './oidc-consent.dto.js';
import { OidcPayloadRepository } from './oidc-payload.repository.js';

// A user's remembered consents: the provider's live grants for that user, one per application.
// Revoking one removes the grant and every code and token issued under it (as the provider's
// `Grant.destroy` and the adapter's `revokeByGrantId` do), in one transaction with its entry:
// the application's refresh token stops at once and the next sign-in asks for consent again.
@Injectable()
export class OidcConsentService {
  constructor(
    private readonly payloads: OidcPayloadRepository,
    private readonly clients: OAuthClientService,
    private readonly users: UserService,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  // The caller's own consents, newest first.
  async list(storeId: string, userId: string, query: PageQuery): Promise<[OAuthConsentResponse[], number, PageRequest]> {
    this.clients.assertEnabled();
    const page = this.clients.page(query);
    const [rows, total] = await this.payloads.listGrants(storeId, userId, this.clock.now(), page);
    const names = await this.clients.namesOf(storeId, rows.map((row) => row.payload.clientId).filter((id): id is string => typeof id === 'string'));
    return [rows.map((row) => toOAuthConsentResponse(row, names)), total, page];
  }

  async revoke(storeId: string, userId: string, consentId: string, actor: AuditActor, context: AuditContext): Promise<void> {
    this.clients.assertEnabled();
    await this.transactions.run(async (tx) => {
      const grant = await this.payloads.findGrant(storeId, userId, consentId, this.clock.now(), tx);
      if (!grant) throw new AppError('OAuthConsentNotFound', 'no such consent of this user in this store');
      await this.payloads.revokeGrant(storeId, consentId, tx);
      await this.audit.record(
        { storeId, action: 'oauth.consent.revoked', outcome: 'success', actor, target: { type: 'oauthConsent', id: consentId }, details: { userId, clientId: grant.payload.clientId ?? null, scopes: grantScopes(grant) } },
        context,
        tx,
      );
    });
  }

  // A user's consents for whoever manages it: itself, or an administrator of its store who
  // outranks it (as its sessions).
  async listFor(actor: SessionData, store: Tenant, userId: string, query: PageQuery): Promise<[OAuthConsentResponse[], number, PageRequest]> {
    this.clients.assertEnabled();
    await this.manageable(actor, store, userId);
    return this.list(store.id, userId, query);
  }

  async revokeFor(actor: SessionData, store: Tenant, userId: string, consentId: string, context: AuditContext): Promise<void> {
    this.clients.assertEnabled();
    await this.manageable(actor, store, userId);
    await this.revoke(store.id, userId, consentId, auditActor(actor), context);
  }

  private async manageable(actor: SessionData, store: Tenant, userId: string): Promise<void> {
    const user = await this.users.findById(store.id, userId);
    if (!user) throw new AppError('UserNotFound', 'no such user in this store');
    if (!mayManage(actor, user)) throw new AppError('Forbidden', "a user's consents are managed only by itself or an administrator who outranks it");
  }
}
