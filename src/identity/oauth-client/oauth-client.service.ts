import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AuditLog, type AuditActor, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { PagingSection } from '../../kernel/paging.settings.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Transactions } from '../../platform/database/transactions.js';
import type { CreateOAuthClientInput, UpdateOAuthClientInput } from './oauth-client.dto.js';
import type { GrantType, OAuthClientEntity, PublicJwks, TokenEndpointAuthMethod } from './oauth-client.entity.js';
import { OAuthClientRepository, type OAuthClientChanges } from './oauth-client.repository.js';
import { grantsProblem, hasSecret, jwksProblem, urisProblem } from './oauth-client.rules.js';
import { OidcProviderSection, type OidcProviderSettings } from './oauth-client.settings.js';

// The client metadata the OpenID Connect provider (`oidc-provider`) reads for a client.
// `client_secret` is the SHA-256 (hex) of the secret: the provider hashes a presented secret
// the same way before comparing.
export interface OidcClientMetadata {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  grant_types: GrantType[];
  response_types: 'code'[];
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  jwks?: PublicJwks;
  scope: string;
  // The service's own application: its users are not asked for consent.
  first_party: boolean;
}

// A client secret: 32 random bytes, base64url. Only its hash is kept.
function newSecret(): { secret: string; secretHash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, secretHash: secretHash(secret) };
}

export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function newClientId(): string {
  return `oc_${randomBytes(16).toString('base64url')}`;
}

// A store's OAuth clients: registered, listed, changed, deleted, their secret rotated. Every
// method takes the store first; a client of another store is not found.
@Injectable()
export class OAuthClientService {
  constructor(
    private readonly repo: OAuthClientRepository,
    private readonly config: AppConfig,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
  ) {}

  get settings(): OidcProviderSettings {
    return this.config.section(OidcProviderSection).oidcProvider;
  }

  // 404 on every route while the provider is off.
  assertEnabled(): void {
    if (!this.settings.enabled) throw new AppError('OidcProviderDisabled', 'the OpenID Connect provider is not enabled (settings oidcProvider.enabled)');
  }

  page(query: PageQuery): PageRequest {
    return pageRequest(query, this.config.section(PagingSection).paging);
  }

  async create(storeId: string, actor: AuditActor, input: CreateOAuthClientInput, context: AuditContext): Promise<{ client: OAuthClientEntity; clientSecret?: string }> {
    this.assertEnabled();
    const method = input.tokenEndpointAuthMethod ?? 'client_secret_basic';
    const shape = {
      redirectUris: input.redirectUris,
      postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
      grantTypes: input.grantTypes ?? ['authorization_code'],
      scopes: input.scopes ?? ['openid'],
    };
    check(shape, method);
    invalidIf(jwksProblem(input.jwks, method));
    const jwks = input.jwks ?? null;
    const secret = hasSecret(method) ? newSecret() : undefined;
    const client = await this.transactions.run(async (tx) => {
      const row = await this.repo.insert(storeId, { id: randomUUID(), clientId: newClientId(), name: input.name, ...shape, tokenEndpointAuthMethod: method, jwks, firstParty: input.firstParty ?? false, secretHash: secret?.secretHash ?? null }, tx);
      await this.audit.record(
        {
          storeId,
          action: 'oauth.client.created',
          outcome: 'success',
          actor,
          target: { type: 'oauthClient', id: row.id },
          details: { clientId: row.clientId, name: row.name, grantTypes: row.grantTypes, tokenEndpointAuthMethod: method, scopes: row.scopes, firstParty: row.firstParty },
        },
        context,
        tx,
      );
      return row;
    });
    return { client, ...(secret && { clientSecret: secret.secret }) };
  }

  list(storeId: string, page: PageRequest): Promise<[OAuthClientEntity[], number]> {
    this.assertEnabled();
    return this.repo.list(storeId, page);
  }

  async get(storeId: string, id: string): Promise<OAuthClientEntity> {
    this.assertEnabled();
    const client = await this.repo.findById(storeId, id);
    if (!client) throw notFound();
    return client;
  }

  // The changed fields are checked with the others as they will be, against the client's
  // authentication method.
  async update(storeId: string, id: string, actor: AuditActor, input: UpdateOAuthClientInput, context: AuditContext): Promise<OAuthClientEntity> {
    const current = await this.get(storeId, id);
    const changes: OAuthClientChanges = {};
    for (const key of ['name', 'redirectUris', 'postLogoutRedirectUris', 'grantTypes', 'scopes', 'firstParty'] as const) {
      if (input[key] !== undefined) Object.assign(changes, { [key]: input[key] });
    }
    check({ ...current, ...changes }, current.tokenEndpointAuthMethod);
    return this.transactions.run(async (tx) => {
      const updated = await this.repo.update(storeId, id, changes, tx);
      if (!updated) throw notFound();
      await this.audit.record({ storeId, action: 'oauth.client.updated', outcome: 'success', actor, target: { type: 'oauthClient', id }, details: { clientId: updated.clientId, fields: Object.keys(changes) } }, context, tx);
      return updated;
    });
  }

  async delete(storeId: string, id: string, actor: AuditActor, context: AuditContext): Promise<void> {
    this.assertEnabled();
    await this.transactions.run(async (tx) => {
      const client = await this.repo.findById(storeId, id, tx);
      if (!client || !(await this.repo.delete(storeId, id, tx))) throw notFound();
      await this.audit.record({ storeId, action: 'oauth.client.deleted', outcome: 'success', actor, target: { type: 'oauthClient', id }, details: { clientId: client.clientId, name: client.name } }, context, tx);
    });
  }

  // A new secret, shown once; the previous one stops at once (no overlap).
  async rotateSecret(storeId: string, id: string, actor: AuditActor, context: AuditContext): Promise<{ client: OAuthClientEntity; clientSecret: string }> {
    const current = await this.get(storeId, id);
    if (!hasSecret(current.tokenEndpointAuthMethod)) throw invalid(`a client with tokenEndpointAuthMethod "${current.tokenEndpointAuthMethod}" has no secret to rotate`);
    const secret = newSecret();
    const client = await this.transactions.run(async (tx) => {
      const updated = await this.repo.update(storeId, id, { secretHash: secret.secretHash }, tx);
      if (!updated) throw notFound();
      await this.audit.record({ storeId, action: 'oauth.client.secret.rotated', outcome: 'success', actor, target: { type: 'oauthClient', id }, details: { clientId: updated.clientId } }, context, tx);
      return updated;
    });
    return { client, clientSecret: secret.secret };
  }

  // A client of the store by its client_id, with its secret's hash (the provider's look-up).
  findByClientId(storeId: string, clientId: string): Promise<OAuthClientEntity | null> {
    return this.repo.findByClientId(storeId, clientId);
  }

  // The names of the store's clients by client_id (a client deleted since is left out).
  async namesOf(storeId: string, clientIds: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.repo.findByClientIds(storeId, [...new Set(clientIds)]);
    return new Map(rows.map((row) => [row.clientId, row.name]));
  }

  // The provider's view of a client of the store, or undefined when the store has none by
  // that client_id.
  async metadataFor(storeId: string, clientId: string): Promise<OidcClientMetadata | undefined> {
    const row = await this.findByClientId(storeId, clientId);
    if (!row) return undefined;
    return {
      client_id: row.clientId,
      ...(row.secretHash && { client_secret: row.secretHash }),
      redirect_uris: row.redirectUris,
      post_logout_redirect_uris: row.postLogoutRedirectUris,
      grant_types: row.grantTypes,
      response_types: row.grantTypes.includes('authorization_code') ? ['code'] : [],
      token_endpoint_auth_method: row.tokenEndpointAuthMethod,
      ...(row.jwks && { jwks: row.jwks }),
      scope: row.scopes.join(' '),
      first_party: row.firstParty,
    };
  }
}

interface ClientShape {
  redirectUris: readonly string[];
  postLogoutRedirectUris: readonly string[];
  grantTypes: readonly GrantType[];
}

function check(shape: ClientShape, method: TokenEndpointAuthMethod): void {
  invalidIf(urisProblem(shape.redirectUris, method, 'redirectUris') ?? urisProblem(shape.postLogoutRedirectUris, method, 'postLogoutRedirectUris') ?? grantsProblem(shape.grantTypes, method, shape.redirectUris));
}

function invalidIf(problem: string | undefined): void {
  if (problem) throw invalid(problem);
}

function invalid(problem: string): AppError {
  return new AppError('OAuthClientInvalid', `the OAuth client is refused: ${problem}`);
}

function notFound(): AppError {
  return new AppError('OAuthClientNotFound', 'no such OAuth client in this store');
}
