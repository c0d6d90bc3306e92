import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import type { SettingsOverrides } from '../src/settings.js';
import { login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// What the store, grant, group and lockout actions record in the audit log: who did it to what,
// its outcome and small details; each store's entries stay its own.

const LOGS = '/auth-api/v1/auditlogs';
const HEADER = 'svc-store-codename';
const GROUPS = '/auth-api/v1/usergroups';
const MEMBERS = '/auth-api/v1/usergroupmembers';
const GRANTS = '/auth-api/v1/permissiongrants';
const LOCK_AFTER = 3;

const SETTINGS: SettingsOverrides = {
  pbacIsActive: true,
  userGroupsActive: true,
  userGroupsInTenantLevel: true,
  permissionGroups: [{ groupName: 'reports', permissions: ['report.read', 'report.write'] }],
  roleGrants: { tenantOwner: ['report.read', 'report.write'], tenantAdmin: ['report.read'] },
  rateLimits: { loginPerUsername: { points: LOCK_AFTER, durationSeconds: 60 } },
};

type Entry = Record<string, unknown> & {
  action: string;
  outcome: string;
  reason: string | null;
  storeId: string;
  actor: { type: string; id: string | null; roleId?: string | null };
  target: { type: string; id: string | null } | null;
  details: Record<string, unknown> | null;
};

interface Owner {
  store: RegisteredStore;
  token: string;
}

async function ownerOfNewStore(t: TestApp): Promise<Owner> {
  const store = await registerStore(t.http);
  const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  return { store, token: accessToken };
}

async function addUser(t: TestApp, o: Owner): Promise<{ id: string; email: string }> {
  const email = uniqueEmail();
  const res = await t.http.post('/auth-api/users').set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).send({ email, password: PASSWORD, fullname: 'Member' }).expect(201);
  return { id: res.body.user.id, email };
}

function as<R extends { set(name: string, value: string): R }>(req: R, o: Owner): R {
  return req.set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`);
}

// The queue written, then the store's entries of one action (newest first) through the route.
async function entries(t: TestApp, o: Owner, action: string): Promise<Entry[]> {
  await t.app.get(AuditRecorderService).flush();
  const res = await as(t.http.get(LOGS), o).query({ pageRowCount: 100, action }).expect(200);
  return res.body.auditLogs as Entry[];
}

describe('audit log: stores, grants, groups and lockouts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ settings: SETTINGS });
  });
  afterAll(() => t?.close());

  it('store.created: in the new store\'s log, by its new owner, written with the store', async () => {
    const store = await registerStore(t.http);
    // In the registration's transaction: there before any flush.
    const rows: { actorId: string }[] = await t.app.get(DataSource).query(`SELECT "actorId" FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'store.created'`, [store.storeId]);
    expect(rows).toEqual([{ actorId: store.ownerId }]);
    const o = { store, token: (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken };
    const [created] = await entries(t, o, 'store.created');
    expect(created).toMatchObject({
      storeId: store.storeId,
      outcome: 'success',
      actor: { type: 'user', id: store.ownerId, roleId: 'tenantOwner' },
      target: { type: 'store', id: store.storeId },
      details: { codename: store.codename },
    });
    expect(created.ip).toEqual(expect.any(String));
    expect(JSON.stringify(created)).not.toContain(PASSWORD);
  });

  it('store.updated: the changed field names, by the administrator; the same value again records nothing', async () => {
    const o = await ownerOfNewStore(t);
    await as(t.http.patch('/auth-api/v1/store'), o).send({ language: 'de' }).expect(200);
    await as(t.http.patch('/auth-api/v1/store'), o).send({ language: 'de' }).expect(200);
    const updated = await entries(t, o, 'store.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ outcome: 'success', actor: { type: 'user', id: o.store.ownerId }, target: { type: 'store', id: o.store.storeId }, details: { fields: ['language'] } });
  });

  it('permission.grant.added and .removed: who granted what to whom', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const grant = await as(t.http.post(GRANTS), o).send({ userId: member.id, permission: 'report.write', canDo: true }).expect(201);
    const id = grant.body.permissionGrant.id as string;
    await as(t.http.delete(`${GRANTS}/${id}`), o).expect(200);
    const [added] = await entries(t, o, 'permission.grant.added');
    expect(added).toMatchObject({
      outcome: 'success',
      actor: { type: 'user', id: o.store.ownerId, roleId: 'tenantOwner' },
      target: { type: 'permissionGrant', id },
      details: { permission: 'report.write', canDo: true, userId: member.id, roleId: null, groupId: null },
    });
    const [removed] = await entries(t, o, 'permission.grant.removed');
    expect(removed).toMatchObject({ outcome: 'success', actor: { id: o.store.ownerId }, target: { type: 'permissionGrant', id }, details: { permission: 'report.write', userId: member.id } });
  });

  it('group.changed: a group created, renamed, a member added, moved and removed, the group deleted', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const other = await addUser(t, o);
    const g = (await as(t.http.post(GROUPS), o).send({ groupName: 'Readers' }).expect(201)).body.userGroup.id as string;
    await as(t.http.patch(`${GROUPS}/${g}`), o).send({ groupName: 'Writers' }).expect(200);
    const m = (await as(t.http.post(MEMBERS), o).send({ groupId: g, userId: member.id }).expect(201)).body.userGroupMember.id as string;
    await as(t.http.patch(`${MEMBERS}/${m}`), o).send({ userId: other.id }).expect(200);
    await as(t.http.delete(`${MEMBERS}/${m}`), o).expect(200);
    await as(t.http.delete(`${GROUPS}/${g}`), o).expect(200);

    // Entries of one instant (the move's two) may list in either order: compared as a set.
    const changes = await entries(t, o, 'group.changed');
    const seen = changes.map((e) => [e.details?.change, e.target?.type, e.target?.id].join(' ')).sort();
    const expected = [
      ['created', 'userGroup', g],
      ['updated', 'userGroup', g],
      ['member.added', 'user', member.id],
      ['member.removed', 'user', member.id], // the move: out of the old user's memberships...
      ['member.added', 'user', other.id], // ...into the new one's
      ['member.removed', 'user', other.id],
      ['deleted', 'userGroup', g],
    ].map((x) => x.join(' ')).sort();
    expect(seen).toEqual(expected);
    for (const e of changes) expect(e).toMatchObject({ outcome: 'success', actor: { type: 'user', id: o.store.ownerId }, details: { groupId: g } });
    expect(changes.find((e) => e.details?.change === 'updated')!.details).toMatchObject({ fields: ['groupName'] });
    for (const e of changes.filter((x) => x.target?.type === 'user')) expect(e.details).toMatchObject({ membershipId: m });
  });

  it('a change and its entry stand or fall together: when the entry cannot be written, the grant, the group, the user change and the store change are not made', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const db = t.app.get(DataSource);
    // The database refuses this store's new audit entries (as a full disk or a lost connection would).
    const fn = `refuse_audit_${o.store.storeId.replaceAll('-', '')}`;
    await db.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit entry refused'; END $$`);
    await db.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON "audit_log" FOR EACH ROW WHEN (NEW."storeId" = '${o.store.storeId}') EXECUTE FUNCTION ${fn}()`);
    try {
      const failed = (status: number) => expect(status).toBeGreaterThanOrEqual(500);
      failed((await as(t.http.post(GRANTS), o).send({ permission: 'report.read', userId: member.id, canDo: true })).status);
      failed((await as(t.http.post(GROUPS), o).send({ groupName: 'never made' })).status);
      failed((await as(t.http.patch(`/auth-api/v1/users/${member.id}`), o).send({ isActive: false, fullname: 'Renamed' })).status);
      failed((await as(t.http.patch('/auth-api/v1/store'), o).send({ language: 'de' })).status);
      expect(await db.query('SELECT 1 FROM "permission_grants" WHERE "userId" = $1', [member.id])).toEqual([]);
      expect(await db.query(`SELECT 1 FROM "user_groups" WHERE "storeId" = $1 AND "groupName" = 'never made'`, [o.store.storeId])).toEqual([]);
      expect(await db.query('SELECT "isActive", "fullname" FROM "users" WHERE "id" = $1', [member.id])).toEqual([{ isActive: true, fullname: 'Member' }]);
      expect((await db.query('SELECT "language" FROM "stores" WHERE "id" = $1', [o.store.storeId]))[0].language).not.toBe('de');
    } finally {
      await db.query(`DROP TRIGGER ${fn} ON "audit_log"`);
      await db.query(`DROP FUNCTION ${fn}()`);
    }
    // With the entry written again, the same change is made and recorded.
    await as(t.http.patch(`/auth-api/v1/users/${member.id}`), o).send({ isActive: false }).expect(200);
    expect((await entries(t, o, 'user.deactivated')).map((e) => e.target?.id)).toEqual([member.id]);
  });

  it('user.login.locked: once, on the failure that takes the last attempt; later refusals are failed logins with reason locked', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const fail = () => t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: member.email, password: 'wrong password!' });
    for (let i = 0; i < LOCK_AFTER; i++) await fail().expect(401);
    await fail().expect(429);
    await fail().expect(429);

    const locked = await entries(t, o, 'user.login.locked');
    expect(locked).toHaveLength(1);
    expect(locked[0]).toMatchObject({
      outcome: 'failure',
      actor: { type: 'anonymous', id: null },
      target: { type: 'user', id: member.id },
      details: { identifierHash: expect.stringMatching(/^[0-9a-f]{64}$/), points: LOCK_AFTER, durationSeconds: 60 },
    });
    const failed = (await entries(t, o, 'user.login.failed')).filter((e) => e.target?.id === member.id);
    expect(failed.map((e) => e.reason).reverse()).toEqual([...Array<string>(LOCK_AFTER).fill('wrong_password'), 'locked', 'locked']);
    expect(JSON.stringify(locked)).not.toContain(member.email);
  });

  it('a failure that leaves attempts, or a right password on the last one, locks nothing', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    for (let i = 0; i < LOCK_AFTER - 1; i++) await t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: member.email, password: 'wrong password!' }).expect(401);
    await login(t.http, member.email, PASSWORD, o.store.codename);
    expect(await entries(t, o, 'user.login.locked')).toEqual([]);
  });

  it('one store\'s admin never sees another\'s store, grant, group or lockout entries; the SaaS admin reads root\'s', async () => {
    const a = await ownerOfNewStore(t);
    const b = await ownerOfNewStore(t);
    const member = await addUser(t, b);
    await as(t.http.patch('/auth-api/v1/store'), b).send({ language: 'fr' }).expect(200);
    const grant = await as(t.http.post(GRANTS), b).send({ userId: member.id, permission: 'report.write', canDo: true }).expect(201);
    await as(t.http.post(GROUPS), b).send({ groupName: 'B only' }).expect(201);
    for (let i = 0; i < LOCK_AFTER; i++) await t.http.post('/auth-api/login').set(HEADER, b.store.codename).send({ username: member.email, password: 'wrong password!' }).expect(401);

    const actions = ['store.created', 'store.updated', 'permission.grant.added', 'group.changed', 'user.login.locked'];
    for (const action of actions) {
      const ofB = await entries(t, b, action);
      expect(ofB.length).toBeGreaterThan(0);
      expect(ofB.every((e) => e.storeId === b.store.storeId)).toBe(true);
      const ofA = await entries(t, a, action);
      expect(ofA.every((e) => e.storeId === a.store.storeId)).toBe(true);
      const text = JSON.stringify(ofA);
      expect(text).not.toContain(b.store.storeId);
      expect(text).not.toContain(member.id);
      expect(text).not.toContain(grant.body.permissionGrant.id);
    }
    // Store B's entries are not root's either.
    const root = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
    await t.app.get(AuditRecorderService).flush();
    const rootLog = await t.http.get(LOGS).query({ pageRowCount: 100, action: 'group.changed' }).set('Authorization', `Bearer ${root}`).expect(200);
    expect(JSON.stringify(rootLog.body.auditLogs)).not.toContain(b.store.storeId);
  });

  it('a SaaS admin\'s grant at root is in root\'s log', async () => {
    const root = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
    const grant = await t.http.post(GRANTS).set('Authorization', `Bearer ${root}`).send({ roleId: 'tenantAdmin', permission: 'report.write', canDo: true }).expect(201);
    const id = grant.body.permissionGrant.id as string;
    await t.http.delete(`${GRANTS}/${id}`).set('Authorization', `Bearer ${root}`).expect(200);
    await t.app.get(AuditRecorderService).flush();
    const res = await t.http.get(LOGS).query({ pageRowCount: 100, action: 'permission.grant.*' }).set('Authorization', `Bearer ${root}`).expect(200);
    const mine = (res.body.auditLogs as Entry[]).filter((e) => e.target?.id === id);
    expect(mine.map((e) => e.action).sort()).toEqual(['permission.grant.added', 'permission.grant.removed']);
    expect(mine[0]).toMatchObject({ actor: { type: 'user', roleId: 'superAdmin' }, details: { roleId: 'tenantAdmin', permission: 'report.write' } });
  });
});
