import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { DatabaseNotifications } from '../../platform/database/database-notifications.js';
import type { StoreEntity } from './store.entity.js';

const MAX_STORES = 10_000;

// Stores by id and codename, so a request does not read its store's row. Every change of a row
// is announced by the database itself (migration StoreChanges) and forgotten here on every
// replica, so a deactivation stops the store's logins and keys with the next request. Nothing is
// kept while those announcements cannot be heard, and a row read while one arrives is not kept
// (it may predate the change). The entities are shared between requests: never mutate one.
@Injectable()
export class StoreCache {
  private readonly byId = new LRUCache<string, StoreEntity>({ max: MAX_STORES });
  private readonly idByCodename = new LRUCache<string, string>({ max: MAX_STORES });
  // Bumped by every change heard: a read that started before one is not kept.
  private changes = 0;

  constructor(private readonly notifications: DatabaseNotifications) {
    notifications.subscribe('store_changed', {
      message: (id) => {
        this.changes++;
        this.byId.delete(id);
      },
      reset: () => {
        this.changes++;
        this.byId.clear();
        this.idByCodename.clear();
      },
    });
  }

  // This replica's own change, committed: forgotten now rather than when the database's
  // announcement arrives (a few milliseconds later), so the next request here sees it.
  forget(id: string): void {
    this.changes++;
    this.byId.delete(id);
  }

  byCodename(codename: string, load: () => Promise<StoreEntity | null>): Promise<StoreEntity | null> {
    return this.read(this.heldByCodename(codename), load);
  }

  // The store as held now, without waiting: what nearly every request's tenant is.
  held(codename: string): StoreEntity | undefined {
    return this.notifications.listening ? this.heldByCodename(codename) : undefined;
  }

  private heldByCodename(codename: string): StoreEntity | undefined {
    const id = this.idByCodename.get(codename);
    return id === undefined ? undefined : this.byId.get(id);
  }

  findById(id: string, load: () => Promise<StoreEntity | null>): Promise<StoreEntity | null> {
    return this.read(this.byId.get(id), load);
  }

  private async read(cached: StoreEntity | undefined, load: () => Promise<StoreEntity | null>): Promise<StoreEntity | null> {
    if (cached && this.notifications.listening) return cached;
    const before = this.changes;
    const store = await load();
    if (store && before === this.changes && this.notifications.listening) {
      this.byId.set(store.id, store);
      this.idByCodename.set(store.codename, store.id);
    }
    return store;
  }
}
