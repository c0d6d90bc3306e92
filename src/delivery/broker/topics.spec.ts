import { describe, expect, it } from '@jest/globals';
import { resolveTopicAlias } from './topics.js';

const KNOWN = new Set(['user', 'store', 'apikey', 'notification']);
const resolve = (alias: string) => resolveTopicAlias(alias, 'auth', KNOWN);

describe('topic aliases', () => {
  it.each([
    ['user.created', 'auth-user-created'],
    ['user_updated', 'auth-user-updated'],
    ['store.created', 'auth-store-created'],
    ['apikey.created', 'auth-apikey-created'],
    ['apiKey.deleted', 'auth-apikey-deleted'],
    ['APIKEY_created', 'auth-apikey-created'],
    ['registerStoreOwner:done', 'auth-registerstoreowner-done'],
    ['dbEvent:user:created', 'auth-dbevent-user-created'],
    ['dbEvent:apiKey:deleted', 'auth-dbevent-apikey-deleted'],
    ['billing-invoice-paid', 'billing-invoice-paid'],
    ['auth-user-created', 'auth-user-created'],
    ['audit:user.login.failed', 'auth-audit-user-login-failed'],
    ['audit:user.2fa.passed', 'auth-audit-user-2fa-passed'],
  ])('%s → %s', (alias, topic) => {
    expect(resolve(alias)).toMatchObject({ topic });
  });

  it('names the unknown object of an alias', () => {
    expect(resolve('order.created')).toEqual({ error: 'alias "order.created" names no known data object "order"' });
    expect(resolve('dbEvent:order:created')).toEqual({ error: 'alias "dbEvent:order:created" names no known data object "order"' });
  });
});
