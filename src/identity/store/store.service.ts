import { Injectable } from '@nestjs/common';
import { AvatarService } from '../avatar/avatar.service.js';
import { AuditLog, auditActor, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import type { SessionData } from '../../kernel/principal.js';
import { pageRequest, type PageRequest } from '../../kernel/paging.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import { codenameBase, uniqueCodename } from './codename.js';
import { toStoreResponse, type BriefStoresQuery, type StoreInput, type UpdateStoreInput } from './store.dto.js';
import { ROOT_CODENAME, type StoreEntity } from './store.entity.js';
import { StoreRepository } from './store.repository.js';
import { StoreCache } from './store-cache.js';

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

  // Tenant targeting: the store a request names, or 400 StoreNotFound.
  async resolve(codename: string): Promise<StoreEntity> {
    const lower = codename.toLowerCase();
    const store = await this.cache.byCodename(lower, () => this.stores.findByCodename(lower));
    if (!store) throw new AppError('StoreNotFound', `store "${codename}" does not exist`);
    return store;
  }

  // A page of the store picker, by its number or just after the store `after` names.
  async listBrief(query: BriefStoresQuery): Promise<[StoreEntity[], number, PageRequest]> {
    const page = pageRequest(query, this.config.settings.paging);
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

  // Who may is decided by the route's roles and the token's store (AuthGuard). A change is
  // recorded (store.updated, the names of the fields that changed) once written; the same values
  // again change nothing and record nothing.
  async update(actor: SessionData, store: StoreEntity, input: UpdateStoreInput, context: AuditContext = {}): Promise<StoreEntity> {
    if (input.language === undefined) return store;
    // The row as it is now: the request's store comes from a cache that may lag a change just made.
    const before = (await this.stores.findById(store.id)) ?? store;
    const fields = input.language === before.language ? [] : ['language'];
    // The change and its entry in one transaction.
    return this.transactions.run(async (tx) => {
      const updated = (await this.stores.update(store.id, { language: input.language }, tx))!;
      if (fields.length) await this.audit.record({ storeId: store.id, action: 'store.updated', outcome: 'success', actor: auditActor(actor), target: { type: 'store', id: store.id }, details: { fields } }, context, tx);
      return updated;
    });
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
