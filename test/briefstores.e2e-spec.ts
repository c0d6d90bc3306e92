import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { registerStore, startApp, type TestApp } from './helpers.js';

describe('GET /auth-api/v1/briefstores', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ settings: { paging: { defaultPageSize: 20, maxPageSize: 5 } } });
  });
  afterAll(() => t.close());

  it('is public and answers the list envelope with brief stores only', async () => {
    const mine = await registerStore(t.http);
    const res = await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 5 }).expect(200);
    expect(res.body).toMatchObject({ status: 'OK', statusCode: '200', dataName: 'stores', action: 'list', method: 'GET', filters: [], uiPermissions: [] });
    expect(res.body.stores.length).toBeGreaterThan(0);
    for (const store of res.body.stores) {
      expect(Object.keys(store).sort()).toEqual(['avatar', 'codename', 'fullname', 'isActive', 'name']);
    }
    expect(res.body.stores.map((s: { codename: string }) => s.codename)).not.toContain('root');
    // the newest store is on the last page
    const last = await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 5, pageNumber: res.body.paging.pageCount }).expect(200);
    expect(last.body.stores.map((s: { codename: string }) => s.codename)).toContain(mine.codename);
  });

  it('pages: caps pageRowCount at the maximum and reports totals', async () => {
    const res = await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 1000 }).expect(200);
    expect(res.body.paging.pageRowCount).toBe(5);
    expect(res.body.rowCount).toBe(res.body.stores.length);
    expect(res.body.paging.pageCount).toBe(Math.ceil(res.body.paging.totalRowCount / 5));
  });

  it('refuses a page number that is not a positive integer', async () => {
    const res = await t.http.get('/auth-api/v1/briefstores').query({ pageNumber: 'x' }).expect(400);
    expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
    expect(res.body.detail).toMatch(/pageNumber/);
  });
});
