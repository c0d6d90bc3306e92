import { Injectable } from '@nestjs/common';
import { AvatarService } from '../avatar/avatar.service.js';
import { AuditLog, auditActor, type AuditAction, type AuditContext, type AuditInput } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { SAAS_ROLES } from '../../kernel/roles.js';
import type { SessionData } from '../../kernel/principal.js';
import { pageRequest, type PageRequest } from '../../kernel/paging.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import { codenameBase, uniqueCodename } from './codename.js';
import { toStoreResponse, type BriefStoresQuery, type StoreInput, type StoreListQuery, type UpdateStoreInput } from './store.dto.js';
import { ROOT_CODENAME, type StoreEntity } from './store.entity.js';
import { StoreRepository, type StoreChangeableField } from './store.repository.js';
import { StoreCache } from './store-cache.js';
import { PagingSection } from '../../kernel/paging.settings.js';

@Injectable()
export class StoreService {
  constructor(
    private readonly stores: StoreRepository,
    private readonly cache: StoreCache,
    private readonly avatars: AvatarService,
    private readonly config: AppConfig,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
  ) {}

  // The store a codename names when the store cache holds it, without waiting (the tenant of
  // nearly every request); otherwise resolve().
  resolveHeld(codename: string): StoreEntity | undefined {
    return this.cache.held(codename.toLowerCase());
  }

  // Tenant targeting: the store a request names, or 400 StoreNotFound.
  async resolve(codename: string): Promise<StoreEntity> {
    const lower = codename.toLowerCase();
    const store = await this.cache.byCodename(lower, () => this.stores.findByCodename(lower));
    if (!store) throw new AppError('StoreNotFound', `store "${codename}" does not exist`);
    return store;
  }

  // A page of the store picker, by its number or just after the store `after` names.
  async listBrief(query: BriefStoresQuery): Promise<[StoreEntity[], number, PageRequest]> {
    const page = pageRequest(query, this.config.section(PagingSection).paging);
    const found = await this.stores.listBrief(page, ROOT_CODENAME, query.after?.toLowerCase());
    if (!found) throw new AppError('ValidationFailed', `after: no store has the codename "${query.after}"`);
    return [found[0], found[1], page];
  }

  // Inside the caller's transaction; the codename is derived from the name and made unique.
  // `origin`: the request's, for a generated avatar's link.
  async create(input: StoreInput, customData: Record<string, unknown>, ownerId: string | null, tx: Tx, origin: string): Promise<StoreEntity> {
    const base = codenameBase(input.name);
    const codename = uniqueCodename(base, await this.stores.codenamesLike(base, tx));
    return this.stores.insert(
      {
        codename,
        name: input.name,
        fullname: input.fullname ?? input.name,
        avatar: input.avatar ?? this.avatars.generate(origin),
        customData,
        ownerId,
      },
      tx,
    );
  }

  // Seeded stores (root, sample) have fixed codenames.
  insertSeeded(s: Pick<StoreEntity, 'codename' | 'name' | 'fullname'>, ownerId: string | null, tx: Tx): Promise<StoreEntity> {
    return this.stores.insert({ codename: s.codename, name: s.name, fullname: s.fullname, ownerId, avatar: this.avatars.generate(), customData: {} }, tx);
  }

  // The store's row as it is now (the request's comes from the cache, which may lag a change
  // another replica has just made).
  async current(store: StoreEntity): Promise<StoreEntity> {
    return (await this.stores.findById(store.id)) ?? store;
  }

  // Every store for the SaaS level (root and inactive ones included), oldest first, paged. The
  // route's roles or permission let the caller in; the list is refused to a caller of another
  // store than root all the same (a grant of `stores.list` reaching a store's role).
  async list(actor: SessionData, query: StoreListQuery): Promise<[StoreEntity[], number, PageRequest]> {
    if (!(await this.atRoot(actor))) throw new AppError('StoreListSaasOnly', 'the list of every store is for the SaaS level: use a login or key of the root store');
    const page = pageRequest(query, this.config.section(PagingSection).paging);
    const [rows, total] = await this.stores.list(page, query.search);
    return [rows, total, page];
  }

  // Who may is decided by the route's roles and the token's store (AuthGuard: the store's
  // administrators, a SaaS administrator targeting it); `isActive` only a SaaS administrator
  // (`superAdmin`, `saasAdmin`: a login or key of the root store), and never false for root.
  // The change and its entries are one transaction: `store.updated` with the names of the fields
  // that changed (never their values), `store.deactivated` / `store.activated`. The same values
  // again change nothing and record nothing. `origin`: the request's, for a generated avatar.
  async update(actor: SessionData, store: StoreEntity, input: UpdateStoreInput, origin?: string, context: AuditContext = {}): Promise<StoreEntity> {
    if (input.isActive !== undefined) {
      if (!(await this.isSaasAdmin(actor))) throw new AppError('StoreActivationSaasOnly', "a store's isActive is changed only by a superAdmin or saasAdmin");
      if (store.codename === ROOT_CODENAME && !input.isActive) throw new AppError('RootStoreAlwaysActive', 'the root store (the SaaS level) cannot be deactivated');
    }
    const by = auditActor(actor);
    const entry = (action: AuditAction, details?: Record<string, unknown>): AuditInput => ({ storeId: store.id, action, outcome: 'success', actor: by, target: { type: 'store', id: store.id }, details });
    const result = await this.transactions.run(async (tx) => {
      // The row as it is now, locked: the request's store comes from a cache that may lag.
      const before = (await this.stores.findForUpdate(store.id, tx)) ?? store;
      const changes: Partial<Pick<StoreEntity, StoreChangeableField>> = {};
      if (input.language !== undefined && input.language !== before.language) changes.language = input.language;
      if (input.name !== undefined && input.name !== before.name) changes.name = input.name;
      if (input.fullname !== undefined && input.fullname !== before.fullname) changes.fullname = input.fullname;
      // null: a new generated avatar.
      if (input.avatar !== undefined && input.avatar !== before.avatar) changes.avatar = input.avatar ?? this.avatars.generate(origin);
      if (input.isActive !== undefined && input.isActive !== before.isActive) changes.isActive = input.isActive;
      const fields = Object.keys(changes).filter((f) => f !== 'isActive');
      if (!fields.length && changes.isActive === undefined) return { store: before, changed: false };
      const updated = (await this.stores.update(store.id, changes, tx))!;
      if (fields.length) await this.audit.record(entry('store.updated', { fields }), context, tx);
      if (changes.isActive !== undefined) await this.audit.record(entry(changes.isActive ? 'store.activated' : 'store.deactivated'), context, tx);
      return { store: updated, changed: true };
    });
    // Every replica forgets the row when the database announces the change; this one at once.
    if (result.changed) this.cache.forget(store.id);
    return result.store;
  }

  private async isSaasAdmin(actor: SessionData): Promise<boolean> {
    return actor.roles.some((r) => r === SAAS_ROLES.superAdmin || r === SAAS_ROLES.saasAdmin) && (await this.atRoot(actor));
  }

  // The caller's login or key is the root store's (the SaaS level).
  private async atRoot(actor: SessionData): Promise<boolean> {
    return (await this.findById(actor.storeId))?.codename === ROOT_CODENAME;
  }

  // The store record as other features may show it.
  toResponse(store: StoreEntity): ReturnType<typeof toStoreResponse> {
    return toStoreResponse(store);
  }

  findById(id: string): Promise<StoreEntity | null> {
    return this.cache.findById(id, () => this.stores.findById(id));
  }

  findByCodename(codename: string, tx?: Tx): Promise<StoreEntity | null> {
    return this.stores.findByCodename(codename, tx);
  }
}
