import { describe, expect, it } from '@jest/globals';
import type { SessionData } from './principal.js';
import { buildEnvelope, type Enveloped } from './envelope.js';
import type { Paging } from './paging.js';
import type { ContextRequest, RequestContext } from './request-context.js';

function fakeRequest(opts: { method?: string; url?: string; storeId?: string; ctx?: Partial<RequestContext> } = {}): ContextRequest {
  return {
    method: opts.method ?? 'POST',
    originalUrl: opts.url ?? '/auth-api/v1/registerstoreuser',
    ctx: {
      requestId: 'req-1',
      startedAt: process.hrtime.bigint(),
      store: opts.storeId === undefined ? undefined : { id: opts.storeId },
      ...opts.ctx,
    },
  } as unknown as ContextRequest;
}

const CREATE = { dataName: 'user', action: 'create' };
const LIST = { dataName: 'stores', action: 'list' };
const build = (result: Enveloped<unknown>, req = fakeRequest({ storeId: 'store-a' }), spec = CREATE, statusCode = 201) =>
  buildEnvelope(spec, result, req, statusCode, '1.2.3');

describe('buildEnvelope', () => {
  it('fills every envelope field for a single object, the data under dataName', () => {
    const user = { id: 'u1', email: 'a@example.com' };
    const envelope = build({ data: user });
    expect(envelope).toEqual({
      status: 'OK',
      statusCode: '201',
      elapsedMs: expect.any(Number),
      ssoTime: 0,
      source: 'db',
      cacheKey: expect.stringMatching(/^[0-9a-f]+$/),
      userId: null,
      sessionId: null,
      requestId: 'req-1',
      dataName: 'user',
      method: 'POST',
      action: 'create',
      appVersion: '1.2.3',
      rowCount: 1,
      user,
    });
    expect(envelope.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('reports the acting user and session when the request has a login', () => {
    const session = { sessionId: 'sess9', userId: 'u9', storeId: 's', roles: ['user'] } as SessionData;
    const envelope = build({ data: {} }, fakeRequest({ storeId: 's', ctx: { session } }));
    expect(envelope).toMatchObject({ userId: 'u9', sessionId: 'sess9' });
  });

  it('measures elapsed time from the request start', () => {
    const startedAt = process.hrtime.bigint() - 250_000_000n; // 250 ms ago
    const envelope = build({ data: {} }, fakeRequest({ ctx: { startedAt } }));
    expect(envelope.elapsedMs).toBeGreaterThanOrEqual(250);
    expect(envelope.elapsedMs).toBeLessThan(10_000);
  });

  it.each<[string, unknown, number]>([
    ['an object', { id: 'x' }, 1],
    ['an array of 3', [{}, {}, {}], 3],
    ['an empty array', [], 0],
    ['null', null, 0],
  ])('counts rows for %s', (_case, data, rowCount) => {
    expect(build({ data }).rowCount).toBe(rowCount);
  });

  describe('cacheKey', () => {
    const key = (storeId: string | undefined, method: string, url: string) =>
      build({ data: {} }, fakeRequest({ storeId, method, url })).cacheKey;

    const session = (userId: string, principal?: 'apiKey') => ({ session: { userId, sessionId: `s-${userId}`, principal } as SessionData });
    const keyFor = (ctx: Partial<RequestContext>) => build({ data: {} }, fakeRequest({ storeId: 'store-a', method: 'GET', url: '/notifications', ctx })).cacheKey;

    it('differs for two callers of the same URL in the same store', () => {
      expect(keyFor(session('u1'))).not.toBe(keyFor(session('u2')));
      expect(keyFor(session('u1'))).not.toBe(keyFor({}));
      expect(keyFor(session('u1'))).not.toBe(keyFor(session('u1', 'apiKey')));
      expect(keyFor(session('u1'))).toBe(keyFor(session('u1')));
    });

    it('is the same for the same store, method and URL', () => {
      expect(key('store-a', 'GET', '/x?p=1')).toBe(key('store-a', 'GET', '/x?p=1'));
    });

    it.each([
      ['another store', 'store-b', 'GET', '/x?p=1'],
      ['no store', undefined, 'GET', '/x?p=1'],
      ['another method', 'store-a', 'POST', '/x?p=1'],
      ['another URL', 'store-a', 'GET', '/x?p=2'],
    ])('differs for %s', (_case, storeId, method, url) => {
      expect(key(storeId, method, url)).not.toBe(key('store-a', 'GET', '/x?p=1'));
    });
  });

  describe('lists', () => {
    const paging: Paging = { pageNumber: 2, pageRowCount: 2, totalRowCount: 5, pageCount: 3 };

    it('adds paging, filters and uiPermissions', () => {
      const stores = [{ codename: 'a' }, { codename: 'b' }];
      const envelope = build({ data: stores, paging, filters: [{ isActive: true }] }, undefined, LIST, 200);
      expect(envelope).toMatchObject({
        statusCode: '200',
        dataName: 'stores',
        action: 'list',
        rowCount: 2,
        stores,
        paging,
        filters: [{ isActive: true }],
        uiPermissions: [],
      });
    });

    it('defaults filters to []', () => {
      expect(build({ data: [], paging }, undefined, LIST, 200).filters).toEqual([]);
    });

    it('leaves list-only fields out of a single-object response', () => {
      const envelope = build({ data: { id: 'x' }, paging, filters: [1] });
      expect(envelope).not.toHaveProperty('paging');
      expect(envelope).not.toHaveProperty('filters');
      expect(envelope).not.toHaveProperty('uiPermissions');
    });
  });

  it('merges extra properties at the top level beside the data', () => {
    const envelope = build({ data: { id: 'u1' }, extra: { store: { codename: 'acme' }, emailVerificationNeeded: true } });
    expect(envelope).toMatchObject({ user: { id: 'u1' }, store: { codename: 'acme' }, emailVerificationNeeded: true, rowCount: 1 });
  });
});
