import { describe, expect, it } from '@jest/globals';
import { loadSettings } from '../../settings.js';
import { changeRefusal, type Changer, type Effect } from './access.policy.js';

const settings = loadSettings(undefined, { customRoles: [{ name: 'Editor', value: 'editor' }] });
const admin: Changer = { userId: 'a', roles: ['tenantAdmin'], ownsStore: false };
const self = { id: 'a', roles: ['tenantAdmin'] };
const peer = { id: 'p', roles: ['tenantAdmin'] };
const owner = { id: 'o', roles: ['tenantOwner'] };
const code = (effects: Effect[], caller: Changer = admin) => changeRefusal(settings, caller, effects)?.errCode ?? 'allowed';

// What the e2e matrix (test/access-rules.e2e-spec.ts) cannot show with fixtures all set by the
// store's owner: who set what the caller would take from itself.
describe('who may change what affects whom', () => {
  it('the caller takes from itself only what it set itself', () => {
    expect(code([{ member: self, takes: ['a'] }])).toBe('allowed');
    expect(code([{ member: self, takes: ['a', 'p'] }])).toBe('Forbidden');
    expect(code([{ grant: 'user', user: self, setBy: 'a' }])).toBe('allowed');
    expect(code([{ grant: 'user', user: self, setBy: 'p' }])).toBe('GrantTargetNotManaged');
  });

  it('a grant is never set on oneself; joining a group is one\'s own business', () => {
    expect(code([{ grant: 'user', user: self }])).toBe('GrantTargetNotManaged');
    expect(code([{ member: self, takes: [] }])).toBe('allowed');
  });

  it('others: a peer\'s grants and memberships are changed whoever set them, the owner\'s never', () => {
    expect(code([{ grant: 'user', user: peer, setBy: 'o' }, { member: peer, takes: ['o'] }])).toBe('allowed');
    expect(code([{ member: peer, takes: [] }, { member: owner, takes: [] }])).toBe('Forbidden');
    expect(code([{ grant: 'user', user: owner }])).toBe('GrantTargetNotManaged');
  });

  it('roles strictly below one\'s own; the whole store: its owner or a super administrator', () => {
    expect(['tenantUser', 'editor', 'tenantAdmin', 'tenantOwner'].map((roleId) => code([{ grant: 'role', roleId }]))).toEqual(['allowed', 'allowed', 'GrantTargetNotManaged', 'GrantTargetNotManaged']);
    expect(code([{ grant: 'store' }])).toBe('GrantTargetNotManaged');
    expect(code([{ grant: 'store' }], { userId: 's', roles: ['superAdmin'], ownsStore: false })).toBe('allowed');
    expect(code([{ grant: 'store' }, { member: owner, takes: ['x'] }, { grant: 'user', user: owner, setBy: 'x' }], { userId: 'o', roles: ['tenantOwner'], ownsStore: true })).toBe('allowed');
  });
});
