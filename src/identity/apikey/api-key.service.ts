import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PermissionCheckService } from '../access/permission-check.service.js';
import type { TtlCache } from '../../platform/cache/ttl-cache.js';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { AuditLog, type AuditContext, type AuditInput } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { afterCommit, Transactions } from '../../platform/database/transactions.js';
import { pageRequest, type PageQuery, type PageRequest } from '../../kernel/paging.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import type { SessionData } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { hasAdminRole, mayManage, rolesWithin } from '../../kernel/roles.js';
import { UserService } from '../user/user.service.js';
import { toApiKeyResponse, type CreateApiKeyInput } from './api-key.dto.js';
import type { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { ApiKeySection } from './api-key.settings.js';
import { PagingSection } from '../../kernel/paging.settings.js';

export const API_KEY_CACHE = Symbol('API_KEY_CACHE');
// The spec's API-key session lifetime: validated again after a day.
const SESSION_TTL_MS = DAY_MS;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

@Injectable()
export class ApiKeyService {
  readonly keyPrefix: string;

  constructor(
    private readonly keys: ApiKeyRepository,
    @Inject(API_KEY_CACHE) private readonly cache: TtlCache<SessionData>,
    private readonly users: UserService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly events: DomainEvents,
    private readonly permissions: PermissionCheckService,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
  ) {
    this.keyPrefix = `sk_${config.env.PROJECT_CODENAME}_`;
  }

  // A new key: 192 random bits after the prefix. The plaintext leaves here once.
  async create(actor: SessionData, store: Tenant, input: CreateApiKeyInput, context: AuditContext = {}): Promise<{ record: ApiKeyEntity; key: string }> {
    this.assertEnabled();
    // A key acts for its creator, a user of the key's store. A super administrator targeting
    // another store is no user there: a key in its own store would carry super-admin power to
    // whoever holds it, and one in the owner's name would write the key's acts as the owner's.
    if (store.id !== actor.storeId) {
      throw new AppError('ApiKeyOutsideOwnStore', `an API key acts for its creator, a user of its store: sign in to store "${store.codename}" as one of its users to make one there`);
    }
    const roles = input.roles ?? actor.roles;
    const within = rolesWithin(actor.roles);
    const beyond = roles.filter((r) => !within.has(r));
    if (beyond.length || !roles.length) throw new AppError('RoleNotAssignable', `a key cannot have roles you do not have (${beyond.join(', ') || 'none given'})`);
    // A key limited to some permissions: each one its creator holds now.
    const permissions = [...new Set(input.permissions ?? [])];
    const unknown = permissions.filter((p) => !this.permissions.catalogue.isKnown(p));
    if (unknown.length) throw new AppError('PermissionUnknown', `no permission "${unknown[0]}"`);
    const creator = { kind: 'user' as const, storeId: actor.storeId, userId: actor.userId, roles: actor.roles };
    const held = await Promise.all(permissions.map((p) => this.permissions.can(creator, p)));
    const missing = permissions.filter((_p, i) => !held[i]);
    if (missing.length) throw new AppError('ApiKeyPermissionNotHeld', `a key cannot have permissions you do not hold (${missing.join(', ')})`);
    if (input.expiresAt && input.expiresAt <= this.clock.now()) throw new AppError('ValidationFailed', 'expiresAt must be in the future');

    const key = this.keyPrefix + randomBytes(24).toString('hex');
    // The key, its audit entry and its event stand or fall together.
    const record = await this.transactions.run(async (tx) => {
      const inserted = await this.keys.insert(actor.storeId, {
        id: randomUUID(),
        userId: actor.userId,
        name: input.name,
        prefix: key.slice(0, this.keyPrefix.length + 6),
        keyHash: hashApiKey(key),
        roles: [...new Set(roles)],
        permissions,
        expiresAt: input.expiresAt ?? null,
        lastUsedAt: null,
        createdAt: this.clock.now(),
      }, tx);
      await this.audit.record(
        { ...auditBy(actor, 'apikey.created'), target: { type: 'apiKey', id: inserted.id }, details: { name: inserted.name, prefix: inserted.prefix, roles: inserted.roles, permissions, ownerId: inserted.userId } },
        context,
        tx,
      );
      await this.events.emit('apikey.created', { apiKeyId: inserted.id, storeId: inserted.storeId, userId: inserted.userId }, tx);
      return inserted;
    });
    return { record, key };
  }

  // Store admins see the store's keys; anyone else their own. Newest first, a page at a time.
  async list(actor: SessionData, storeId: string, query: PageQuery): Promise<[ApiKeyEntity[], number, PageRequest]> {
    const page = pageRequest(query, this.config.section(PagingSection).paging);
    const [rows, total] = await this.keys.list(storeId, hasAdminRole(actor.roles) ? undefined : actor.userId, page);
    return [rows, total, page];
  }

  // A key is managed by whoever manages its owner (the user-management rule): a tenantAdmin
  // sees the owner's keys in the list but cannot delete them.
  async delete(actor: SessionData, storeId: string, id: string, context: AuditContext = {}): Promise<void> {
    const key = await this.keys.findById(storeId, id);
    if (!key || (key.userId !== actor.userId && !hasAdminRole(actor.roles))) throw new AppError('NotFound', 'no such API key');
    const owner = await this.users.findById(storeId, key.userId);
    if (owner && !mayManage(actor, owner)) throw new AppError('Forbidden', 'this key belongs to a user you may not manage');
    await this.transactions.run(async (tx) => {
      await this.keys.delete(storeId, id, tx);
      await this.audit.record({ ...auditBy(actor, 'apikey.deleted'), storeId, target: { type: 'apiKey', id }, details: { name: key.name, prefix: key.prefix, ownerId: key.userId } }, context, tx);
      // The key's cached session goes before its streams are checked again (the event).
      afterCommit(tx, () => this.cache.delete([key.keyHash]));
      await this.events.emit('apikey.deleted', { apiKeyId: id, storeId, userId: key.userId }, tx);
    });
  }

  // The key as its owner sees it in lists: never the key or its hash.
  async findView(storeId: string, id: string): Promise<ReturnType<typeof toApiKeyResponse> | undefined> {
    const key = await this.keys.findById(storeId, id);
    return key ? toApiKeyResponse(key) : undefined;
  }

  // The key's session: from the cache (a day at most), or built from the key record and its
  // owner. Lookup is by the hash of the key, so comparing secrets never happens.
  async authenticate(key: string): Promise<SessionData> {
    if (!this.config.section(ApiKeySection).apiKeys.enabled || !key.startsWith(this.keyPrefix)) throw invalidKey();
    const hash = hashApiKey(key);
    const now = this.clock.now();
    const cached = await this.cache.get(hash);
    if (cached) {
      if (new Date(cached.expiresAt) > now) return cached;
      await this.cache.delete([hash]);
    }
    const record = await this.keys.findByKeyHash(hash);
    if (!record || (record.expiresAt && record.expiresAt <= now)) throw invalidKey();
    const owner = await this.users.findById(record.storeId, record.userId);
    if (!owner?.isActive) throw invalidKey();
    // Never more than its owner has now: a demoted owner's key loses the roles it no longer has.
    const within = rolesWithin(owner.roles);
    const roles = record.roles.filter((r) => within.has(r));
    if (!roles.length) throw invalidKey();
    const expiresAt = new Date(Math.min(now.getTime() + SESSION_TTL_MS, record.expiresAt?.getTime() ?? Infinity));
    const session: SessionData = {
      sessionId: record.id,
      userId: owner.id,
      storeId: record.storeId,
      roles,
      email: owner.email,
      mobile: owner.mobile,
      fullname: owner.fullname,
      expiresAt: expiresAt.toISOString(),
      principal: 'apiKey',
      permissions: record.permissions,
    };
    await this.cache.set(hash, session, expiresAt.getTime() - now.getTime());
    // Written once per validation (a day), not per request.
    await this.keys.markUsed(record.storeId, record.id, now);
    return session;
  }

  // The owner was deactivated, deleted or given other roles: its keys are validated again on
  // every replica at once.
  async forgetOwner(storeId: string, userId: string): Promise<void> {
    await this.cache.delete(await this.keys.keyHashesOf(storeId, userId));
  }

  private assertEnabled(): void {
    if (!this.config.section(ApiKeySection).apiKeys.enabled) throw new AppError('Forbidden', 'API keys are disabled');
  }
}

function auditBy(actor: SessionData, action: 'apikey.created' | 'apikey.deleted'): AuditInput {
  return { storeId: actor.storeId, action, outcome: 'success', actor: { type: actor.principal === 'apiKey' ? 'apiKey' : 'user', id: actor.userId, roleId: actor.roles[0] ?? null } };
}

function invalidKey(): AppError {
  return new AppError('Unauthorized', 'invalid or expired API key');
}
