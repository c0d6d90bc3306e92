import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SAAS_ADMIN_PERMISSIONS, SERVICE_PERMISSION_GROUPS } from '../src/kernel/service-permissions.js';
import type { SettingsOverrides } from '../src/settings.js';
import { expectError, login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// User groups and members, and grants made through them: tenant vs global groups, cross-store
// attempts refused, deletion ending memberships and grants at once.

const HEADER = 'svc-store-codename';
const GROUPS = '/auth-api/v1/usergroups';
const MEMBERS = '/auth-api/v1/usergroupmembers';
const GRANTS = '/auth-api/v1/permissiongrants';

const SETTINGS: SettingsOverrides = {
  pbacIsActive: true,
  userGroupsActive: true,
  userGroupsInTenantLevel: true,
  permissionGroups: [{ groupName: 'reports', permissions: ['report.read', 'report.write', 'report.export'] }],
  roleGrants: { tenantOwner: ['report.read', 'report.write'], tenantAdmin: ['report.read'] },
};

interface Store extends RegisteredStore {
  owner: string;
  user: { id: string; token: string };
  admin: { id: string; token: string };
}

function as<R extends { set(name: string, value: string): R }>(req: R, codename: string | undefined, bearer: string): R {
  if (codename) req.set(HEADER, codename);
  return req.set('Authorization', `Bearer ${bearer}`);
}

async function store(t: TestApp): Promise<Store> {
  const s = await registerStore(t.http);
  const owner = (await login(t.http, s.ownerEmail, PASSWORD, s.codename)).accessToken;
  const add = async (roleId: string) => {
    const email = uniqueEmail();
    const res = await as(t.http.post('/auth-api/users'), s.codename, owner).send({ email, password: PASSWORD, fullname: 'Member', roleId }).expect(201);
    return { id: res.body.user.id as string, token: (await login(t.http, email, PASSWORD, s.codename)).accessToken };
  };
  return { ...s, owner, user: await add('tenantUser'), admin: await add('tenantAdmin') };
}

describe('user groups, tenant level', () => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    t = await startApp({ settings: SETTINGS });
    root = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
  });
  afterAll(() => t.close());

  it('a store admin creates a store group with a generated avatar; lists carry the envelope, paging and uiPermissions', async () => {
    const s = await store(t);
    const created = await as(t.http.post(GROUPS), s.codename, s.admin.token).send({ groupName: 'Readers' }).expect(201);
    expect(created.body.userGroup).toMatchObject({ groupName: 'Readers', storeId: s.storeId, ownerId: s.admin.id, avatar: expect.stringMatching(/\/auth-api\/avatars\/[a-f0-9]{32}\.svg$/) });
    const list = await as(t.http.get(GROUPS), s.codename, s.admin.token).expect(200);
    expect(list.body).toMatchObject({ status: 'OK', dataName: 'userGroups', action: 'list', paging: { pageNumber: 1, totalRowCount: expect.any(Number) } });
    // the deployment's permissions the caller holds, and the service's own (a store's admin holds
    // them all but the SaaS level's)
    expect(list.body.uiPermissions).toEqual([...SERVICE_PERMISSION_GROUPS.flatMap((g) => g.permissions).filter((p) => !SAAS_ADMIN_PERMISSIONS.includes(p)), 'report.read']);
    expect(list.body.userGroups.map((g: { id: string }) => g.id)).toContain(created.body.userGroup.id);
    const owners = await as(t.http.get(GROUPS), s.codename, s.owner).expect(200);
    expect([...owners.body.uiPermissions].filter((p) => p.startsWith('report.')).sort()).toEqual(['report.read', 'report.write']);
    const users = await as(t.http.get(`/auth-api/v1/users`), s.codename, s.user.token);
    expectError(users, 403, 'PermissionDenied');
  });

  it('only admin-level users create groups and members', async () => {
    const s = await store(t);
    expectError(await as(t.http.post(GROUPS), s.codename, s.user.token).send({ groupName: 'Mine' }), 403, 'PermissionDenied');
    const g = await as(t.http.post(GROUPS), s.codename, s.admin.token).send({ groupName: 'G' }).expect(201);
    expectError(await as(t.http.post(MEMBERS), s.codename, s.user.token).send({ groupId: g.body.userGroup.id, userId: s.user.id }), 403, 'PermissionDenied');
  });

  it('cross-store: another store\'s group is not found, another store\'s user is never added', async () => {
    const a = await store(t);
    const b = await store(t);
    const ga = await as(t.http.post(GROUPS), a.codename, a.admin.token).send({ groupName: 'A' }).expect(201);
    const gb = await as(t.http.post(GROUPS), b.codename, b.admin.token).send({ groupName: 'B' }).expect(201);
    expectError(await as(t.http.post(MEMBERS), a.codename, a.admin.token).send({ groupId: ga.body.userGroup.id, userId: b.user.id }), 404, 'UserNotFound');
    expectError(await as(t.http.post(MEMBERS), a.codename, a.admin.token).send({ groupId: gb.body.userGroup.id, userId: a.user.id }), 404, 'UserGroupNotFound');
    expectError(await as(t.http.get(`${GROUPS}/${gb.body.userGroup.id}`), a.codename, a.admin.token), 404, 'UserGroupNotFound');
    expectError(await as(t.http.delete(`${GROUPS}/${gb.body.userGroup.id}`), a.codename, a.admin.token), 404, 'UserGroupNotFound');
    const listed = await as(t.http.get(GROUPS), a.codename, a.admin.token).query({ pageRowCount: 100 }).expect(200);
    expect(listed.body.userGroups.map((g: { id: string }) => g.id)).not.toContain(gb.body.userGroup.id);
    // a store admin's token does not reach another store at all
    expectError(await as(t.http.get(GROUPS), b.codename, a.admin.token), 403, 'TenantMismatch');
  });

  it('global groups: created and deleted by SaaS admins only; a store admin adds its own users and sees only them', async () => {
    const a = await store(t);
    const b = await store(t);
    const global = await as(t.http.post(GROUPS), undefined, root).send({ groupName: 'Everyone' }).expect(201);
    const id = global.body.userGroup.id;
    expect(global.body.userGroup.storeId).toBeNull();
    const ma = await as(t.http.post(MEMBERS), a.codename, a.admin.token).send({ groupId: id, userId: a.user.id }).expect(201);
    await as(t.http.post(MEMBERS), b.codename, b.admin.token).send({ groupId: id, userId: b.user.id }).expect(201);
    expectError(await as(t.http.post(MEMBERS), a.codename, a.admin.token).send({ groupId: id, userId: a.user.id }), 409, 'UserGroupMemberExists');
    const seen = await as(t.http.get(MEMBERS), a.codename, a.admin.token).query({ groupId: id }).expect(200);
    expect(seen.body.userGroupMembers).toEqual([expect.objectContaining({ id: ma.body.userGroupMember.id, userId: a.user.id, ownerId: a.admin.id, storeId: a.storeId })]);
    expectError(await as(t.http.patch(`${GROUPS}/${id}`), a.codename, a.owner).send({ groupName: 'Mine now' }), 403, 'GlobalGroupSaasOnly');
    expectError(await as(t.http.delete(`${GROUPS}/${id}`), a.codename, a.owner), 403, 'GlobalGroupSaasOnly');
    await as(t.http.delete(`${GROUPS}/${id}`), undefined, root).expect(200);
    expectError(await as(t.http.get(`${MEMBERS}/${ma.body.userGroupMember.id}`), a.codename, a.admin.token), 404, 'UserGroupMemberNotFound');
  });

  it('deleting a group ends its memberships and the effect of its grants at once', async () => {
    const s = await store(t);
    const g = await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Writers' }).expect(201);
    const member = await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, userId: s.user.id }).expect(201);
    await as(t.http.post(GRANTS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, permission: 'report.write', canDo: true }).expect(201);
    const canWrite = async () => (await as(t.http.get('/auth-api/permissions/report.write'), s.codename, s.user.token).expect(200)).body.canDo;
    expect(await canWrite()).toBe(true);
    await as(t.http.delete(`${GROUPS}/${g.body.userGroup.id}`), s.codename, s.owner).expect(200);
    expect(await canWrite()).toBe(false);
    expectError(await as(t.http.get(`${MEMBERS}/${member.body.userGroupMember.id}`), s.codename, s.owner), 404, 'UserGroupMemberNotFound');
    const grants = await as(t.http.get(GRANTS), s.codename, s.owner).expect(200);
    expect(grants.body.permissionGrants).toEqual([]);
  });

  it('PATCH /v1/usergroupmembers/:id moves a membership to another group or user under the rules of adding one', async () => {
    const s = await store(t);
    const other = await store(t);
    const writers = await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Writers' }).expect(201);
    const readers = await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Readers' }).expect(201);
    await as(t.http.post(GRANTS), s.codename, s.owner).send({ groupId: writers.body.userGroup.id, permission: 'report.write', canDo: true }).expect(201);
    const m = await as(t.http.post(MEMBERS), s.codename, s.admin.token).send({ groupId: readers.body.userGroup.id, userId: s.user.id }).expect(201);
    const url = `${MEMBERS}/${m.body.userGroupMember.id}`;
    const canWrite = async (token: string) => (await as(t.http.get('/auth-api/permissions/report.write'), s.codename, token).expect(200)).body.canDo;
    expect(await canWrite(s.user.token)).toBe(false);
    const moved = await as(t.http.patch(url), s.codename, s.admin.token).send({ groupId: writers.body.userGroup.id }).expect(200);
    expect(moved.body).toMatchObject({ dataName: 'userGroupMember', action: 'update', userGroupMember: { id: m.body.userGroupMember.id, groupId: writers.body.userGroup.id, userId: s.user.id } });
    expect(await canWrite(s.user.token)).toBe(true);
    // the same rules as adding: not another store's user or group, not the owner for an admin, not twice
    expectError(await as(t.http.patch(url), s.codename, s.admin.token).send({ userId: other.user.id }), 404, 'UserNotFound');
    expectError(await as(t.http.patch(url), s.codename, s.admin.token).send({ userId: s.ownerId }), 403, 'Forbidden');
    const second = await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: readers.body.userGroup.id, userId: s.user.id }).expect(201);
    expectError(await as(t.http.patch(`${MEMBERS}/${second.body.userGroupMember.id}`), s.codename, s.owner).send({ groupId: writers.body.userGroup.id }), 409, 'UserGroupMemberExists');
    expectError(await as(t.http.patch(url), s.codename, s.admin.token).send({ groupId: s.user.id }), 404, 'UserGroupNotFound');
    expectError(await as(t.http.patch(url), s.codename, s.user.token).send({ userId: s.admin.id }), 403, 'PermissionDenied');
    // to another user: the grant follows the membership
    await as(t.http.patch(url), s.codename, s.admin.token).send({ userId: s.admin.id }).expect(200);
    expect(await canWrite(s.user.token)).toBe(false);
    expect(await canWrite(s.admin.token)).toBe(true);
  });

  it('removing a member ends the group\'s grants for that user only', async () => {
    const s = await store(t);
    const g = await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Writers' }).expect(201);
    const m = await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, userId: s.user.id }).expect(201);
    await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, userId: s.admin.id }).expect(201);
    await as(t.http.post(GRANTS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, permission: 'report.write', canDo: true }).expect(201);
    await as(t.http.delete(`${MEMBERS}/${m.body.userGroupMember.id}`), s.codename, s.admin.token).expect(200);
    expect((await as(t.http.get('/auth-api/permissions/report.write'), s.codename, s.user.token)).body.canDo).toBe(false);
    expect((await as(t.http.get('/auth-api/permissions/report.write'), s.codename, s.admin.token)).body.canDo).toBe(true);
  });
});

describe('permission grants', () => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    t = await startApp({ settings: SETTINGS });
    root = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
  });
  afterAll(() => t.close());

  it('a store admin never grants what it does not hold; unknown permissions and two subjects are refused', async () => {
    const s = await store(t);
    expectError(await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ userId: s.user.id, permission: 'report.write', canDo: true }), 403, 'PermissionNotHeld');
    expectError(await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ userId: s.user.id, permission: 'report.write', canDo: false }), 403, 'PermissionNotHeld');
    expectError(await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ userId: s.user.id, permission: 'report.nope', canDo: true }), 400, 'PermissionUnknown');
    expectError(await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ userId: s.user.id, roleId: 'tenantUser', permission: 'report.read', canDo: true }), 400, 'ValidationFailed');
    expectError(await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ roleId: 'wizard', permission: 'report.read', canDo: true }), 400, 'ValidationFailed');
    expectError(await as(t.http.post(GRANTS), s.codename, s.user.token).send({ userId: s.user.id, permission: 'report.read', canDo: true }), 403, 'PermissionDenied');
    const ok = await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ userId: s.user.id, permission: 'report.read', canDo: true }).expect(201);
    expect(ok.body.permissionGrant).toMatchObject({ storeId: s.storeId, userId: s.user.id, permission: 'report.read', canDo: true, objectId: null, ownerId: s.admin.id });
  });

  it('an admin denied a permission cannot delete the deny', async () => {
    const s = await store(t);
    const deny = await as(t.http.post(GRANTS), s.codename, s.owner).send({ userId: s.admin.id, permission: 'report.read', canDo: false }).expect(201);
    expect((await as(t.http.get('/auth-api/permissions/report.read'), s.codename, s.admin.token)).body.canDo).toBe(false);
    expectError(await as(t.http.delete(`${GRANTS}/${deny.body.permissionGrant.id}`), s.codename, s.admin.token), 403, 'GrantTargetNotManaged');
    await as(t.http.delete(`${GRANTS}/${deny.body.permissionGrant.id}`), s.codename, s.owner).expect(200);
    expect((await as(t.http.get('/auth-api/permissions/report.read'), s.codename, s.admin.token)).body.canDo).toBe(true);
  });

  it('grants only over principals one outranks: a tenantAdmin cannot deny the owner, its own role or the whole store', async () => {
    const s = await store(t);
    const deny = (body: Record<string, unknown>) => as(t.http.post(GRANTS), s.codename, s.admin.token).send({ permission: 'report.read', canDo: false, ...body });
    expectError(await deny({ userId: s.ownerId }), 403, 'GrantTargetNotManaged');
    expectError(await deny({ roleId: 'tenantOwner' }), 403, 'GrantTargetNotManaged');
    expectError(await deny({ roleId: 'tenantAdmin' }), 403, 'GrantTargetNotManaged');
    expectError(await deny({ userId: s.admin.id }), 403, 'GrantTargetNotManaged');
    expectError(await deny({}), 403, 'GrantTargetNotManaged');
    expect((await as(t.http.get('/auth-api/permissions/report.read'), s.codename, s.owner).expect(200)).body.canDo).toBe(true);
    // a lesser role and a user it may manage
    await deny({ roleId: 'tenantUser' }).expect(201);
    await deny({ userId: s.user.id, objectId: 'r1' }).expect(201);
    // nor through a group: it does not add the owner to one
    const g = await as(t.http.post(GROUPS), s.codename, s.admin.token).send({ groupName: 'G' }).expect(201);
    expectError(await as(t.http.post(MEMBERS), s.codename, s.admin.token).send({ groupId: g.body.userGroup.id, userId: s.ownerId }), 403, 'Forbidden');
  });

  it('deleting a grant takes rank over its target, not the permission: the owner lifts a store-wide deny, an admin denied lifts its deny on a user', async () => {
    const s = await store(t);
    const onUser = await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ userId: s.user.id, permission: 'report.read', canDo: false }).expect(201);
    await as(t.http.post(GRANTS), s.codename, s.owner).send({ userId: s.admin.id, permission: 'report.read', canDo: false }).expect(201);
    const storeWide = await as(t.http.post(GRANTS), s.codename, s.owner).send({ permission: 'report.read', canDo: false }).expect(201);
    expect((await as(t.http.get('/auth-api/permissions/report.read'), s.codename, s.owner).expect(200)).body.canDo).toBe(false);
    // the admin no longer holds report.read, and still manages the user it denied
    await as(t.http.delete(`${GRANTS}/${onUser.body.permissionGrant.id}`), s.codename, s.admin.token).expect(200);
    // the store-wide deny reaches the owner: only the owner lifts it, without holding report.read
    expectError(await as(t.http.delete(`${GRANTS}/${storeWide.body.permissionGrant.id}`), s.codename, s.admin.token), 403, 'GrantTargetNotManaged');
    await as(t.http.delete(`${GRANTS}/${storeWide.body.permissionGrant.id}`), s.codename, s.owner).expect(200);
    expect((await as(t.http.get('/auth-api/permissions/report.read'), s.codename, s.owner).expect(200)).body.canDo).toBe(true);
  });

  it('a tenantAdmin cannot deny the store owner through a group the owner is in (issue 22.5)', async () => {
    const s = await store(t);
    const g = await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Owners' }).expect(201);
    await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, userId: s.ownerId }).expect(201);
    // the same refusal as a deny aimed at the owner's user id or role
    expectError(await as(t.http.post(GRANTS), s.codename, s.admin.token).send({ permission: 'users.list', groupId: g.body.userGroup.id, canDo: false }), 403, 'GrantTargetNotManaged');
    await as(t.http.get('/auth-api/v1/users'), s.codename, s.owner).expect(200);
    expect((await as(t.http.get(GRANTS), s.codename, s.owner).expect(200)).body.permissionGrants).toEqual([]);
  });

  it('a tenantAdmin cannot lift a deny the owner put on it through a group: not the grant, its membership, nor the group (issue 22.6)', async () => {
    const s = await store(t);
    const g = await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Restricted' }).expect(201);
    const m = await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, userId: s.admin.id }).expect(201);
    const deny = await as(t.http.post(GRANTS), s.codename, s.owner).send({ permission: 'users.list', groupId: g.body.userGroup.id, canDo: false }).expect(201);
    const listUsers = () => as(t.http.get('/auth-api/v1/users'), s.codename, s.admin.token);
    expectError(await listUsers(), 403, 'PermissionDenied');
    const membership = `${MEMBERS}/${m.body.userGroupMember.id}`;
    const attempts = [];
    for (const req of [
      () => as(t.http.delete(`${GRANTS}/${deny.body.permissionGrant.id}`), s.codename, s.admin.token),
      () => as(t.http.delete(membership), s.codename, s.admin.token),
      () => as(t.http.patch(membership), s.codename, s.admin.token).send({ userId: s.user.id }),
      () => as(t.http.delete(`${GROUPS}/${g.body.userGroup.id}`), s.codename, s.admin.token),
    ]) {
      const res = await req();
      attempts.push({ status: res.status, errCode: res.body.errCode });
    }
    expect(attempts).toEqual([
      { status: 403, errCode: 'GrantTargetNotManaged' },
      { status: 403, errCode: 'Forbidden' },
      { status: 403, errCode: 'Forbidden' },
      { status: 403, errCode: 'Forbidden' },
    ]);
    expectError(await listUsers(), 403, 'PermissionDenied');
    expect((await as(t.http.get(membership), s.codename, s.owner).expect(200)).body.userGroupMember).toMatchObject({ groupId: g.body.userGroup.id, userId: s.admin.id });
    // the owner lifts it
    await as(t.http.delete(`${GRANTS}/${deny.body.permissionGrant.id}`), s.codename, s.owner).expect(200);
    await listUsers().expect(200);
  });

  it('a tenantAdmin cannot remove the owner\'s membership, as it cannot move it (issue 22.7)', async () => {
    const s = await store(t);
    const g = await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Owners' }).expect(201);
    const m = await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: g.body.userGroup.id, userId: s.ownerId }).expect(201);
    const membership = `${MEMBERS}/${m.body.userGroupMember.id}`;
    expectError(await as(t.http.patch(membership), s.codename, s.admin.token).send({ userId: s.user.id }), 403, 'Forbidden');
    expectError(await as(t.http.delete(membership), s.codename, s.admin.token), 403, 'Forbidden');
    await as(t.http.get(membership), s.codename, s.owner).expect(200);
  });

  it('GET /v1/permissiongrants/:id: one grant of this store; another store\'s is not found', async () => {
    const a = await store(t);
    const b = await store(t);
    const g = await as(t.http.post(GRANTS), a.codename, a.owner).send({ roleId: 'tenantUser', permission: 'report.read', canDo: true, objectId: 'r1' }).expect(201);
    const res = await as(t.http.get(`${GRANTS}/${g.body.permissionGrant.id}`), a.codename, a.admin.token).expect(200);
    expect(res.body).toMatchObject({ status: 'OK', dataName: 'permissionGrant', action: 'get', permissionGrant: g.body.permissionGrant });
    expectError(await as(t.http.get(`${GRANTS}/${g.body.permissionGrant.id}`), b.codename, b.owner), 404, 'PermissionGrantNotFound');
    expectError(await as(t.http.get(`${GRANTS}/${g.body.permissionGrant.id}`), a.codename, a.user.token), 403, 'PermissionDenied');
  });

  it('store admins act in their store only: another store\'s users and grants are not found', async () => {
    const a = await store(t);
    const b = await store(t);
    expectError(await as(t.http.post(GRANTS), a.codename, a.owner).send({ userId: b.user.id, permission: 'report.read', canDo: true }), 404, 'UserNotFound');
    const gb = await as(t.http.post(GRANTS), b.codename, b.owner).send({ userId: b.user.id, permission: 'report.read', canDo: true }).expect(201);
    expectError(await as(t.http.delete(`${GRANTS}/${gb.body.permissionGrant.id}`), a.codename, a.owner), 404, 'PermissionGrantNotFound');
    const listed = await as(t.http.get(GRANTS), a.codename, a.owner).expect(200);
    expect(listed.body.permissionGrants).toEqual([]);
  });

  it('a SaaS-level grant made at root reaches that role in every store, and ends when deleted', async () => {
    const a = await store(t);
    const read = async () => (await as(t.http.get('/auth-api/permissions/report.export'), a.codename, a.user.token).expect(200)).body;
    expect(await read()).toMatchObject({ canDo: false });
    const g = await as(t.http.post(GRANTS), undefined, root).send({ roleId: 'tenantUser', permission: 'report.export', canDo: true }).expect(201);
    expect(g.body.permissionGrant.storeId).toBeNull();
    expect(await read()).toMatchObject({ canDo: true, exceptions: [] });
    await as(t.http.delete(`${GRANTS}/${g.body.permissionGrant.id}`), undefined, root).expect(200);
    expect(await read()).toMatchObject({ canDo: false });
  });

  it('an unknown permission name is a 400, not a 500', async () => {
    const a = await store(t);
    expectError(await as(t.http.get('/auth-api/permissions/report.nope'), a.codename, a.user.token), 400, 'PermissionUnknown');
    expectError(await as(t.http.get('/auth-api/permissions/%20bad'), a.codename, a.user.token), 400, 'ValidationFailed');
  });
});

describe('user groups switched off or global only', () => {
  it('answer 404 UserGroupsInactive while userGroupsActive is false', async () => {
    const t = await startApp({ settings: { userGroupsActive: false } });
    try {
      const s = await store(t);
      expectError(await as(t.http.get(GROUPS), s.codename, s.owner), 404, 'UserGroupsInactive');
      expectError(await as(t.http.post(MEMBERS), s.codename, s.owner).send({ groupId: s.user.id, userId: s.user.id }), 404, 'UserGroupsInactive');
    } finally {
      await t.close();
    }
  });

  it('without userGroupsInTenantLevel every group is global: a store admin cannot create one', async () => {
    const t = await startApp({ settings: { ...SETTINGS, userGroupsInTenantLevel: false } });
    try {
      const s = await store(t);
      expectError(await as(t.http.post(GROUPS), s.codename, s.owner).send({ groupName: 'Mine' }), 403, 'GlobalGroupSaasOnly');
    } finally {
      await t.close();
    }
  });
});
