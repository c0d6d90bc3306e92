import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../kernel/errors.js';
import { channelFor, CHANNEL_TEMPLATE, checkChannelAccess, forwardChannelProblem, parseChannel } from './realtime.channels.js';

const USER = { userId: '0b7c4a52-1d5e-4d9a-9f0e-3c2b1a000001', roles: ['tenantUser'] };
const ADMIN = { userId: '0b7c4a52-1d5e-4d9a-9f0e-3c2b1a000002', roles: ['tenantAdmin'] };

function refusal(call: () => void): string | undefined {
  try {
    call();
    return undefined;
  } catch (error) {
    return (error as AppError).errCode;
  }
}

describe('store-scoped channel names', () => {
  it('read the kind longest prefix first, then the store up to the first _', () => {
    expect(parseChannel('private-encrypted-acme_vault')).toEqual({ kind: 'private-encrypted-', codename: 'acme', name: 'vault' });
    expect(parseChannel('private-acme-2_orders_eu')).toEqual({ kind: 'private-', codename: 'acme-2', name: 'orders_eu' });
    expect(parseChannel('presence-acme_lobby')).toEqual({ kind: 'presence-', codename: 'acme', name: 'lobby' });
    expect(parseChannel('acme_news')).toEqual({ kind: '', codename: 'acme', name: 'news' });
    expect(parseChannel('private-acme')).toBeUndefined();
    expect(parseChannel('private-Acme_x')).toBeUndefined();
  });

  it('never let a store reach a store whose codename extends its own', () => {
    expect(refusal(() => checkChannelAccess(USER, 'acme', 'private-acme-2_orders'))).toBe('RealtimeChannelForbidden');
    expect(refusal(() => checkChannelAccess(USER, 'acme-2', 'private-acme_orders'))).toBe('RealtimeChannelForbidden');
    expect(refusal(() => checkChannelAccess(USER, 'acme', 'private-acme_orders'))).toBeUndefined();
  });

  it('keep user channels to their user and admin channels to administrators', () => {
    expect(refusal(() => checkChannelAccess(USER, 'acme', `private-acme_user-${USER.userId}`))).toBeUndefined();
    expect(refusal(() => checkChannelAccess(USER, 'acme', `private-acme_user-${ADMIN.userId}`))).toBe('RealtimeChannelForbidden');
    expect(refusal(() => checkChannelAccess(ADMIN, 'acme', `private-acme_user-${USER.userId}`))).toBe('RealtimeChannelForbidden');
    expect(refusal(() => checkChannelAccess(USER, 'acme', 'presence-acme_admin'))).toBe('RealtimeChannelForbidden');
    expect(refusal(() => checkChannelAccess(ADMIN, 'acme', 'presence-acme_admin-room'))).toBeUndefined();
    expect(refusal(() => checkChannelAccess(USER, 'acme', 'presence-acme_administrivia'))).toBeUndefined();
  });

  it('take forward-rule templates only with the store in its place', () => {
    for (const ok of ['{storeCodename}_news', 'private-{storeCodename}_users', 'private-encrypted-{storeCodename}_v', 'presence-{storeCodename}_lobby']) expect(CHANNEL_TEMPLATE.test(ok)).toBe(true);
    for (const bad of ['private-users', 'private-{storeCodename}', 'private-x-{storeCodename}_u', '{storeCodename}_a_{storeCodename}', 'private-{storeCodename}_a.b']) expect(CHANNEL_TEMPLATE.test(bad)).toBe(false);
    expect(channelFor('private-{storeCodename}_users', 'acme')).toBe('private-acme_users');
  });

  it('send forwarded events to a store\'s admin channel only, never a public one', () => {
    for (const ok of ['private-{storeCodename}_admin', 'private-{storeCodename}_admin-users', 'private-encrypted-{storeCodename}_admin-v', 'presence-{storeCodename}_admin-lobby']) {
      expect(forwardChannelProblem(ok)).toBeUndefined();
    }
    expect(forwardChannelProblem('{storeCodename}_admin-users')).toMatch(/is public, open to anyone holding the app key/);
    for (const everyone of ['private-{storeCodename}_users', 'presence-{storeCodename}_lobby', 'private-{storeCodename}_admin_users', 'private-{storeCodename}_administrators']) {
      expect(forwardChannelProblem(everyone)).toMatch(/open to every user of the store/);
    }
    expect(forwardChannelProblem('private-users')).toMatch(/events stay in their store/);
    // What the rule is refused is what /realtime/auth would have let a user join.
    expect(refusal(() => checkChannelAccess(USER, 'acme', channelFor('private-{storeCodename}_admin_users', 'acme')))).toBeUndefined();
    expect(refusal(() => checkChannelAccess(USER, 'acme', channelFor('private-{storeCodename}_admin-users', 'acme')))).toBe('RealtimeChannelForbidden');
  });
});
