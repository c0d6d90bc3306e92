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
    // the newest stores come last: ours is on the last pages (other suites on the shared
    // database may register stores meanwhile, so the page before and after are read too)
    const count = res.body.paging.pageCount as number;
    const near: string[] = [];
    for (const pageNumber of [count - 1, count, count + 1].filter((n) => n >= 1)) {
      const page = await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 5, pageNumber }).expect(200);
      near.push(...page.body.stores.map((s: { codename: string }) => s.codename));
    }
    expect(near).toContain(mine.codename);
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

  it('walks the same pages by `after` (the last codename of the page before) as by page number', async () => {
    for (let i = 0; i < 6; i++) await registerStore(t.http);
    const byNumber = async (pageNumber: number) => (await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 3, pageNumber }).expect(200)).body;
    const first = await byNumber(1);
    const codenames = (page: { stores: { codename: string }[] }) => page.stores.map((s) => s.codename);
    let after = codenames(first).at(-1)!;
    for (const pageNumber of [2, 3]) {
      const res = await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 3, pageNumber, after }).expect(200);
      expect(codenames(res.body)).toEqual(codenames(await byNumber(pageNumber)));
      expect(res.body.paging).toMatchObject({ pageNumber, pageRowCount: 3 });
      // other suites add stores to the same database meanwhile
      expect(res.body.paging.totalRowCount).toBeGreaterThanOrEqual(first.paging.totalRowCount);
      after = codenames(res.body).at(-1)!;
    }
    // case does not matter, as for the store header
    const upper = await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 3, after: codenames(first).at(-1)!.toUpperCase() }).expect(200);
    expect(codenames(upper.body)).toEqual(codenames(await byNumber(2)));
  });

  it('answers only newer stores after the newest one (none unless another was added since), and refuses an `after` that names no store or is no codename', async () => {
    const all = await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 5, pageNumber: 1_000_000 }).expect(200);
    expect(all.body.stores).toEqual([]);
    const oldest = (await t.http.get('/auth-api/v1/briefstores').query({ pageRowCount: 5 }).expect(200)).body.stores.map((s: { codename: string }) => s.codename);
    const newest = await registerStore(t.http);
    const after = (await t.http.get('/auth-api/v1/briefstores').query({ after: newest.codename }).expect(200)).body.stores.map((s: { codename: string }) => s.codename);
    for (const codename of [newest.codename, ...oldest]) expect(after).not.toContain(codename);
    for (const after of ['no-such-store-0000', 'not a codename', "x' OR 1=1 --"]) {
      const res = await t.http.get('/auth-api/v1/briefstores').query({ after }).expect(400);
      expect(res.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'ValidationFailed' });
      expect(res.body.detail).toMatch(/after/);
    }
  });
});
