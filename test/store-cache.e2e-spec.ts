import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { DatabaseNotifications } from '../src/platform/database/database-notifications.js';
import { StoreRepository } from '../src/identity/store/store.repository.js';
import { login, PASSWORD, registerStore, startApp, type TestApp, updateStoreRow } from './helpers.js';

// The store a request names is read from the database once, then served from the store cache
// until the database announces a change of its row; while those announcements cannot be heard,
// every request reads the row again.

const HEADER = 'svc-store-codename';
const CURRENT = '/auth-api/currentuser';

describe('store cache', () => {
  let t: TestApp;
  let db: DataSource;
  let reads: string[];
  beforeAll(async () => {
    t = await startApp();
    db = t.app.get(DataSource);
    // Count the store rows read, through the service's own repository.
    const repo = t.app.get(StoreRepository);
    reads = [];
    const byCodename = repo.findByCodename.bind(repo);
    repo.findByCodename = (codename, manager) => (reads.push(codename), byCodename(codename, manager));
  });
  afterAll(() => t?.close());

  const setLanguage = (storeId: string, language: string) => updateStoreRow([t], storeId, { language });
  const current = (codename: string, token: string) => t.http.get(CURRENT).set(HEADER, codename).set('Authorization', `Bearer ${token}`);

  it('reads a store once for many requests, and again after its row changes by any means', async () => {
    const store = await registerStore(t.http);
    const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    await setLanguage(store.storeId, 'fr'); // a change: the next request reads the row
    reads.length = 0;
    for (let i = 0; i < 5; i++) await current(store.codename, accessToken).expect(200);
    expect(reads.filter((c) => c === store.codename)).toHaveLength(1);

    await updateStoreRow([t], store.storeId, { isActive: false });
    expect((await current(store.codename, accessToken)).status).toBe(401);
    await updateStoreRow([t], store.storeId, { isActive: true });
    await current(store.codename, accessToken).expect(200);
    expect(reads.filter((c) => c === store.codename).length).toBeGreaterThanOrEqual(2);
  });

  it('reads the row on every request while database notifications are not heard, and caches again once they are', async () => {
    const store = await registerStore(t.http);
    const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const notifications = t.app.get(DatabaseNotifications);
    notifications.listening = false; // as between a dropped listening connection and its return
    try {
      reads.length = 0;
      for (let i = 0; i < 3; i++) await current(store.codename, accessToken).expect(200);
      expect(reads.filter((c) => c === store.codename)).toHaveLength(3);
    } finally {
      notifications.listening = true;
    }
    await setLanguage(store.storeId, 'de');
    reads.length = 0;
    for (let i = 0; i < 3; i++) await current(store.codename, accessToken).expect(200);
    expect(reads.filter((c) => c === store.codename)).toHaveLength(1);
  });
});
