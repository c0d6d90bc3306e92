import { describe, expect, it } from '@jest/globals';
import { loadSettings, type SettingsOverrides } from '../../settings.js';
import type { Principal } from '../../kernel/principal.js';
import { decide, PermissionCatalogue, type GrantLike } from './permissions.js';

const BASE: SettingsOverrides = {
  pbacIsActive: true,
  permissionGroups: [{ groupName: 'reports', permissions: ['report.read', 'report.write'] }],
};

function catalogue(over: SettingsOverrides = {}): PermissionCatalogue {
  return new PermissionCatalogue(loadSettings(undefined, { ...BASE, ...over }));
}

function problems(over: SettingsOverrides): string[] {
  try {
    catalogue(over);
  } catch (error) {
    return (error as { problems?: string[] }).problems ?? [(error as Error).message];
  }
  return [];
}

const user: Principal = { kind: 'user', storeId: 's', userId: 'u', roles: ['tenantUser'] };
const grant = (g: Partial<GrantLike>): GrantLike => ({ permission: 'report.read', roleId: null, userId: null, groupId: null, objectId: null, canDo: true, ...g });

describe('permission settings at boot', () => {
  it('refuse a permission listed twice, naming it', () => {
    expect(problems({ permissionGroups: [{ groupName: 'a', permissions: ['x.read'] }, { groupName: 'b', permissions: ['x.read'] }] }).join('\n')).toMatch(/"x\.read" is listed twice \(group "b"\)/);
  });

  it('refuse an unknown permission or role in roleGrants, and an unknown permission in a rule', () => {
    const found = problems({
      roleGrants: { tenantUser: ['report.delete'], nobody: ['report.read'] },
      attributeRules: [{ name: 'r', dataObject: 'report', whereClause: 'true', permissions: ['report.nope'] }],
    }).join('\n');
    expect(found).toMatch(/roleGrants\.tenantUser: unknown permission "report\.delete"/);
    expect(found).toMatch(/roleGrants: unknown role "nobody"/);
    expect(found).toMatch(/attributeRules\.r: unknown permission "report\.nope"/);
  });

  it('refuse an attribute rule whose whereClause does not compile or is not a condition', () => {
    expect(problems({ attributeRules: [{ name: 'broken', dataObject: 'report', whereClause: 'object.ownerId ==', permissions: ['report.read'] }] }).join('\n')).toMatch(/attributeRules\.broken: whereClause does not compile/);
    expect(problems({ attributeRules: [{ name: 'typo', dataObject: 'report', whereClause: 'sesion.userId == "a"', permissions: ['report.read'] }] }).join('\n')).toMatch(/attributeRules\.typo: whereClause does not compile/);
    expect(problems({ attributeRules: [{ name: 'text', dataObject: 'report', whereClause: '"yes"', permissions: ['report.read'] }] }).join('\n')).toMatch(/must produce a bool/);
  });

  it('accept custom roles in roleGrants', () => {
    expect(problems({ customRoles: [{ name: 'Editor', value: 'editor' }], roleGrants: { editor: ['report.read'] } })).toEqual([]);
  });
});

describe('decide', () => {
  it('denies by default, and denies an unknown permission even with a grant', () => {
    const c = catalogue();
    expect(decide(c, user, 'report.read', [])).toBe(false);
    expect(decide(c, user, 'report.nope', [grant({ permission: 'report.nope' })])).toBe(false);
  });

  it('with pbacIsActive false, grants give nothing; only absolute roles pass', () => {
    const c = catalogue({ pbacIsActive: false });
    expect(decide(c, user, 'report.read', [grant({})])).toBe(false);
    expect(decide(c, { ...user, roles: ['superAdmin'] }, 'report.read', [])).toBe(true);
  });

  it('a type switched off in permissionTypes does not count', () => {
    const types = { roleBased: true, userBased: false, userGroupBased: true, objectBased: true, tenantBased: true, attributeBased: true };
    expect(decide(catalogue(), user, 'report.read', [grant({ userId: 'u' })])).toBe(true);
    expect(decide(catalogue({ permissionTypes: types }), user, 'report.read', [grant({ userId: 'u' })])).toBe(false);
  });

  it('group grants count only while user groups are active', () => {
    expect(decide(catalogue({ userGroupsActive: true }), user, 'report.read', [grant({ groupId: 'g' })])).toBe(true);
    expect(decide(catalogue({ userGroupsActive: false }), user, 'report.read', [grant({ groupId: 'g' })])).toBe(false);
  });

  it('roles of a user with several roles all take part', () => {
    const c = catalogue({ usersHaveMultipleRoles: true, customRoles: [{ name: 'Editor', value: 'editor' }], roleGrants: { editor: ['report.write'] } });
    expect(decide(c, { ...user, roles: ['tenantUser', 'editor'] }, 'report.write', [])).toBe(true);
    expect(decide(c, user, 'report.write', [])).toBe(false);
  });
});
