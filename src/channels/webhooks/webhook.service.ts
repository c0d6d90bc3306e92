import { randomBytes, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { Injectable } from '@nestjs/common';
import { AuditLog, type AuditActor, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { ExtensionCatalogue } from '../../kernel/extensions.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { PagingSection } from '../../kernel/paging.settings.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Clock } from '../../platform/clock/clock.js';
import { KeyEncryption } from '../../platform/crypto/key-encryption.js';
import { Transactions } from '../../platform/database/transactions.js';
import { refusedAddress, resolveAll } from '../../platform/net/outbound-address.js';
import type { CreateWebhookInput, UpdateWebhookInput } from './webhook.dto.js';
import type { DeliveryStatus, WebhookDeliveryEntity, WebhookEndpointEntity } from './webhook.entity.js';
import { WebhookRepository } from './webhook.repository.js';
import { WebhookSection, type WebhookSettings } from './webhook.settings.js';
import { WebhookTopics } from './webhook-topics.js';

const HOUR_MS = 3_600_000;

// A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks).
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

// A store's webhook endpoints: created, listed, changed, deleted, their secret rotated. Every
// method takes the store first; an endpoint of another store is not found.
@Injectable()
export class WebhookService {
  readonly secrets: KeyEncryption;
  private readonly topics: WebhookTopics;

  constructor(
    private readonly repo: WebhookRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
    extensions: ExtensionCatalogue,
  ) {
    const { KEY_ENCRYPTION_SECRET, KEY_ENCRYPTION_SECRET_PREVIOUS } = config.env;
    this.secrets = new KeyEncryption(KEY_ENCRYPTION_SECRET, { salt: 'svc-webhook-secrets', what: 'the webhook secrets' }, KEY_ENCRYPTION_SECRET_PREVIOUS);
    this.topics = new WebhookTopics(extensions.auditActions);
  }

  get settings(): WebhookSettings {
    return this.config.section(WebhookSection).webhooks;
  }

  // 404 on every route while webhooks are off.
  assertEnabled(): void {
    if (!this.settings.enabled) throw new AppError('WebhooksDisabled', 'webhooks are not enabled (settings webhooks.enabled)');
  }

  page(query: PageQuery): PageRequest {
    return pageRequest(query, this.config.section(PagingSection).paging);
  }

  async create(storeId: string, actor: AuditActor, input: CreateWebhookInput, context: AuditContext): Promise<{ endpoint: WebhookEndpointEntity; secret: string }> {
    this.assertEnabled();
    const url = await this.checkUrl(input.url);
    this.checkTopics(input.topics);
    const secret = newSecret();
    const endpoint = await this.transactions.run(async (tx) => {
      // Counted in the transaction that adds: two creations side by side may pass the count
      // together, which bounds the overshoot by the concurrency of one store's administrators.
      if ((await this.repo.countEndpoints(storeId, tx)) >= this.settings.maxEndpointsPerStore) {
        throw new AppError('WebhookLimitReached', `a store has at most ${this.settings.maxEndpointsPerStore} webhook endpoints (settings webhooks.maxEndpointsPerStore)`);
      }
      const row = await this.repo.insertEndpoint(
        storeId,
        { id: randomUUID(), url, topics: input.topics, description: input.description ?? null, enabled: input.enabled ?? true, disabledReason: null, secret: this.secrets.seal(secret), previousSecret: null, previousSecretUntil: null, failingSince: null },
        tx,
      );
      await this.audit.record({ storeId, action: 'webhook.created', outcome: 'success', actor, target: { type: 'webhook', id: row.id }, details: { url, topics: row.topics, enabled: row.enabled } }, context, tx);
      return row;
    });
    return { endpoint, secret };
  }

  list(storeId: string, page: PageRequest): Promise<[WebhookEndpointEntity[], number]> {
    this.assertEnabled();
    return this.repo.listEndpoints(storeId, page);
  }

  async get(storeId: string, id: string): Promise<WebhookEndpointEntity> {
    this.assertEnabled();
    const endpoint = await this.repo.findEndpoint(storeId, id);
    if (!endpoint) throw notFound();
    return endpoint;
  }

  async update(storeId: string, id: string, actor: AuditActor, input: UpdateWebhookInput, context: AuditContext): Promise<WebhookEndpointEntity> {
    const current = await this.get(storeId, id);
    const changes: Partial<WebhookEndpointEntity> = {};
    if (input.url !== undefined) changes.url = await this.checkUrl(input.url);
    if (input.topics !== undefined) {
      this.checkTopics(input.topics);
      changes.topics = input.topics;
    }
    if (input.description !== undefined) changes.description = input.description;
    if (input.enabled !== undefined) {
      changes.enabled = input.enabled;
      // Enabled again by hand: what the service had against it is forgotten.
      if (input.enabled && !current.enabled) Object.assign(changes, { disabledReason: null, failingSince: null });
    }
    return this.transactions.run(async (tx) => {
      const updated = await this.repo.updateEndpoint(storeId, id, changes, tx);
      if (!updated) throw notFound();
      const fields = Object.keys(changes).filter((k) => k !== 'disabledReason' && k !== 'failingSince');
      await this.audit.record({ storeId, action: 'webhook.updated', outcome: 'success', actor, target: { type: 'webhook', id }, details: { fields, ...(changes.url && { url: changes.url }), ...(changes.topics && { topics: changes.topics }) } }, context, tx);
      return updated;
    });
  }

  async delete(storeId: string, id: string, actor: AuditActor, context: AuditContext): Promise<void> {
    this.assertEnabled();
    await this.transactions.run(async (tx) => {
      const endpoint = await this.repo.findEndpoint(storeId, id, tx);
      if (!endpoint || !(await this.repo.deleteEndpoint(storeId, id, tx))) throw notFound();
      await this.audit.record({ storeId, action: 'webhook.deleted', outcome: 'success', actor, target: { type: 'webhook', id }, details: { url: endpoint.url } }, context, tx);
    });
  }

  // A new secret, shown once; the current one keeps signing beside it for the overlap.
  async rotateSecret(storeId: string, id: string, actor: AuditActor, context: AuditContext): Promise<{ endpoint: WebhookEndpointEntity; secret: string }> {
    const current = await this.get(storeId, id);
    const secret = newSecret();
    const overlapMs = this.settings.secretOverlapHours * HOUR_MS;
    const endpoint = await this.transactions.run(async (tx) => {
      const updated = await this.repo.updateEndpoint(
        storeId,
        id,
        { secret: this.secrets.seal(secret), previousSecret: overlapMs > 0 ? current.secret : null, previousSecretUntil: overlapMs > 0 ? new Date(this.clock.now().getTime() + overlapMs) : null },
        tx,
      );
      if (!updated) throw notFound();
      await this.audit.record({ storeId, action: 'webhook.secret.rotated', outcome: 'success', actor, target: { type: 'webhook', id }, details: { overlapHours: this.settings.secretOverlapHours } }, context, tx);
      return updated;
    });
    return { endpoint, secret };
  }

  // The secrets that sign now: the current one, and the previous one during its overlap.
  signingSecrets(endpoint: WebhookEndpointEntity): string[] {
    const now = this.clock.now();
    const previous = endpoint.previousSecret && endpoint.previousSecretUntil && endpoint.previousSecretUntil > now ? [this.secrets.open(endpoint.previousSecret)] : [];
    return [this.secrets.open(endpoint.secret), ...previous];
  }

  async deliveries(storeId: string, endpointId: string, status: DeliveryStatus | undefined, page: PageRequest): Promise<[WebhookDeliveryEntity[], number]> {
    await this.get(storeId, endpointId);
    return this.repo.listDeliveries(storeId, endpointId, status, page);
  }

  async delivery(storeId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryEntity> {
    await this.get(storeId, endpointId);
    const delivery = await this.repo.findDelivery(storeId, endpointId, deliveryId);
    if (!delivery) throw new AppError('WebhookNotFound', 'no such delivery of this endpoint');
    return delivery;
  }

  // `https` (unless allowHttp), no credentials in it, and (unless allowPrivateNetworks) a host
  // that neither is nor resolves to a refused address. A name that does not resolve now is
  // accepted: every attempt resolves it again and is refused then if it must be.
  async checkUrl(raw: string): Promise<string> {
    const { allowHttp, allowPrivateNetworks } = this.settings;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refused('not a URL');
    }
    if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) throw refused(allowHttp ? 'only http and https URLs' : 'https is required (settings webhooks.allowHttp is false)');
    if (url.username || url.password) throw refused('a URL with credentials in it');
    if (url.hash) throw refused('a URL with a fragment');
    if (!allowPrivateNetworks) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const addresses = isIP(host) ? [host] : await resolveAll(host).catch(() => []);
      for (const address of addresses) {
        const why = refusedAddress(address);
        if (why) throw refused(address === host ? `${host} is ${why}` : `${host} resolves to ${address}, ${why}`);
      }
    }
    return url.href;
  }

  private checkTopics(topics: readonly string[]): void {
    const unknown = this.topics.unknown(topics);
    if (unknown.length) throw new AppError('WebhookTopicUnknown', `unknown topic${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
  }
}

function notFound(): AppError {
  return new AppError('WebhookNotFound', 'no such webhook endpoint in this store');
}

function refused(why: string): AppError {
  return new AppError('WebhookUrlRefused', `the webhook URL is refused: ${why}`);
}
