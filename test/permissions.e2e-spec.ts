import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SettingsOverrides } from '../src/settings.js';
import { PolicyAudit } from '../src/kernel/policy-audit.js';
import { mintMachineToken } from '../src/identity/m2m/machine-token.js';
import { ProbeModule } from './fixtures/access-probe.js';
import { expectError, login, PASSWORD, registerStore, startApp, uniqueEmail, type RegisteredStore, type TestApp, SUPER_ADMIN } from './helpers.js';

// Permission-based access: one can() behind the route decorator and the object checks in
// services, for every principal kind and every permission type, allow / deny / exception.

const HEADER = 'svc-store-codename';
const GRANTS = '/auth-api/v1/permissiongrants';
const billing = generateKeyPairSync('ed25519');
const reporting = generateKeyPairSync('ed25519');
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }) as string;
// The deployment's own permissions (the service's route permissions are answered too).
const OWN = /^(report|document)\./;

const SETTINGS: SettingsOverrides = {
  pbacIsActive: true,
  userGroupsActive: true,
  customRoles: [{ name: 'Editor', value: 'editor' }],
  permissionGroups: [
    { groupName: 'reports', permissions: ['report.read', 'report.write'] },
    { groupName: 'documents', permissions: ['document.read'] },
  ],
  // The owner ships with what it hands out.
  roleGrants: { tenantOwner: ['report.read', 'report.write', 'document.read'] },
  attributeRules: [{ name: 'ownDrafts', dataObject: 'document', whereClause: "object.ownerId == session.userId && object.status == 'draft'", permissions: ['document.read'] }],
  machineTokens: {
    services: [
      { name: 'billing', publicKey: pem(billing.publicKey), permissions: ['report.read'] },
      { name: 'reporting', publicKey: pem(reporting.publicKey) },
    ],
    machineToMachineBlockList: [],
    allowedM2MClients: [],
  },
};

interface Caller {
  label: string;
  role: string;
  userId: string;
  bearer: string;
}

interface World {
  store: RegisteredStore;
  owner: string;
  callers: Caller[];
}

let t: TestApp;

function as(req: ReturnType<TestApp['http']['get']>, store: RegisteredStore, bearer: string) {
  return req.set(HEADER, store.codename).set('Authorization', `Bearer ${bearer}`);
}

async function addUser(store: RegisteredStore, owner: string, roleId: string): Promise<{ id: string; email: string }> {
  const email = uniqueEmail();
  const res = await as(t.http.post('/auth-api/users'), store, owner).send({ email, password: PASSWORD, fullname: 'Member', roleId }).expect(201);
  return { id: res.body.user.id, email };
}

// A fresh store with a user of each non-owner role and an API key of the tenantUser.
async function world(): Promise<World> {
  const store = await registerStore(t.http);
  const owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  const callers: Caller[] = await Promise.all(
    ['tenantUser', 'tenantAdmin', 'editor'].map(async (role) => {
      const u = await addUser(store, owner, role);
      return { label: `user (${role})`, role, userId: u.id, bearer: (await login(t.http, u.email, PASSWORD, store.codename)).accessToken };
    }),
  );
  const key = await as(t.http.post('/auth-api/v1/apikeys'), store, callers[0].bearer).send({ name: 'probe' }).expect(201);
  callers.push({ ...callers[0], label: 'API key (of the tenantUser)', bearer: key.body.apiKey.key });
  return { store, owner, callers };
}

async function grant(w: World, body: Record<string, unknown>): Promise<string> {
  const res = await as(t.http.post(GRANTS), w.store, w.owner).send(body);
  expect(res.status).toBe(201);
  return res.body.permissionGrant.id;
}

async function group(w: World, userId: string): Promise<string> {
  const g = await as(t.http.post('/auth-api/v1/usergroups'), w.store, w.owner).send({ groupName: 'readers' }).expect(201);
  await as(t.http.post('/auth-api/v1/usergroupmembers'), w.store, w.owner).send({ groupId: g.body.userGroup.id, userId }).expect(201);
  return g.body.userGroup.id;
}

// The subject of a grant of each type, for one caller.
type Subject = (w: World, c: Caller) => Promise<Record<string, unknown>>;
const SUBJECTS: Record<string, Subject> = {
  roleBased: async (_w, c) => ({ roleId: c.role }),
  userBased: async (_w, c) => ({ userId: c.userId }),
  userGroupBased: async (w, c) => ({ groupId: await group(w, c.userId) }),
  tenantBased: async () => ({}),
};

interface Expected {
  canDo: boolean;
  exceptions: { objectId: string; canDo: boolean }[];
  route: number;
  objects: Record<string, number>;
}

// Per type and case: the grants made for the caller, and what it then meets.
const CASES: { type: string; outcome: string; grants: (subject: Record<string, unknown>) => Record<string, unknown>[]; expected: Expected }[] = [];
for (const type of Object.keys(SUBJECTS)) {
  CASES.push(
    { type, outcome: 'allow', grants: (s) => [{ ...s, permission: 'report.read', canDo: true }], expected: { canDo: true, exceptions: [], route: 200, objects: { r1: 200 } } },
    { type, outcome: 'deny', grants: (s) => [{ ...s, permission: 'report.read', canDo: false }], expected: { canDo: false, exceptions: [], route: 403, objects: { r1: 403 } } },
    {
      type,
      outcome: 'exception',
      grants: (s) => [
        { ...s, permission: 'report.read', canDo: true },
        { ...s, permission: 'report.read', canDo: false, objectId: 'r1' },
      ],
      expected: { canDo: true, exceptions: [{ objectId: 'r1', canDo: false }], route: 200, objects: { r1: 403, r2: 200 } },
    },
  );
}
// Object-based: a grant on one object only.
CASES.push(
  { type: 'objectBased', outcome: 'allow', grants: (s) => [{ ...s, permission: 'report.read', canDo: true, objectId: 'r1' }], expected: { canDo: false, exceptions: [{ objectId: 'r1', canDo: true }], route: 403, objects: { r1: 200, r2: 403 } } },
  { type: 'objectBased', outcome: 'deny', grants: (s) => [{ ...s, permission: 'report.read', canDo: false, objectId: 'r1' }], expected: { canDo: false, exceptions: [], route: 403, objects: { r1: 403 } } },
  {
    type: 'objectBased',
    outcome: 'exception',
    grants: (s) => [
      { ...s, permission: 'report.read', canDo: true, objectId: 'r2' },
      { permission: 'report.read', canDo: false },
    ],
    expected: { canDo: false, exceptions: [{ objectId: 'r2', canDo: true }], route: 403, objects: { r1: 403, r2: 200 } },
  },
);

describe('permission decisions: principal kind x permission type x allow / deny / exception', () => {
  beforeAll(async () => {
    t = await startApp({ settings: SETTINGS, imports: [ProbeModule] });
  });
  afterAll(() => t.close());

  for (const c of CASES) {
    it(`${c.type}: ${c.outcome}`, async () => {
      const w = await world();
      const seen: unknown[] = [];
      const wanted: unknown[] = [];
      // The same grant for several callers (a tenant-wide one) is made once, and tenant-wide
      // ones last: a tenant-wide deny reaches the granting owner too.
      const planned = new Map<string, Record<string, unknown>>();
      for (const caller of w.callers.filter((x) => !x.label.startsWith('API key'))) {
        const subject = await (SUBJECTS[c.type] ?? SUBJECTS.userBased)(w, caller);
        for (const g of c.grants(subject)) planned.set(JSON.stringify(g), g);
      }
      const tenantWide = (g: Record<string, unknown>) => !('roleId' in g || 'userId' in g || 'groupId' in g);
      for (const g of [...planned.values()].sort((a, b) => Number(tenantWide(a)) - Number(tenantWide(b)))) await grant(w, g);
      // A tenant-wide grant reaches everyone at once; the other callers' grants must not reach
      // this one, so the expected answer is the same for every caller.
      const ids = Object.keys(c.expected.objects);
      for (const caller of w.callers) {
        const [decision, route, ...objectAnswers] = await Promise.all([
          as(t.http.get('/auth-api/permissions/report.read'), w.store, caller.bearer),
          as(t.http.get('/probe/reports'), w.store, caller.bearer),
          ...ids.map((id) => as(t.http.get(`/probe/reports/${id}`), w.store, caller.bearer)),
        ]);
        const objects = Object.fromEntries(ids.map((id, i) => [id, objectAnswers[i].status]));
        seen.push({ caller: caller.label, canDo: decision.body.canDo, exceptions: decision.body.exceptions, route: route.status, objects });
        wanted.push({ caller: caller.label, ...c.expected });
        if (route.status === 403) expectError(route, 403, 'PermissionDenied');
      }
      expect(seen).toEqual(wanted);
    });
  }

  it('a grant to one user, role or group does not reach another', async () => {
    const w = await world();
    const [user, admin, editor] = w.callers;
    await grant(w, { userId: user.userId, permission: 'report.read', canDo: true });
    await grant(w, { roleId: 'tenantAdmin', permission: 'report.write', canDo: true });
    const g = await group(w, admin.userId);
    await grant(w, { groupId: g, permission: 'document.read', canDo: true });
    const answers = async (c: Caller, store = w.store) => {
      const res = await as(t.http.get('/auth-api/permissions'), store, c.bearer).expect(200);
      return (res.body.permissions as { permission: string; canDo: boolean }[]).filter((p) => p.canDo && OWN.test(p.permission)).map((p) => p.permission).sort();
    };
    expect(await answers(user)).toEqual(['report.read']);
    expect(await answers(admin)).toEqual(['document.read', 'report.write']);
    expect(await answers(editor)).toEqual([]);
    // and nothing of it reaches another store
    const other = await world();
    expect(await answers(other.callers[0], other.store)).toEqual([]);
  });

  it('attributeBased: a CEL whereClause over the object and the session; an object exception overrides it', async () => {
    const w = await world();
    const [user, admin] = w.callers;
    const read = (c: Caller, doc: Record<string, unknown>) => as(t.http.post('/probe/documents/read'), w.store, c.bearer).send(doc);
    expect((await read(user, { id: 'd1', ownerId: user.userId, status: 'draft' })).status).toBe(200);
    expectError(await read(user, { id: 'd2', ownerId: user.userId, status: 'published' }), 403, 'PermissionDenied');
    expectError(await read(admin, { id: 'd1', ownerId: user.userId, status: 'draft' }), 403, 'PermissionDenied');
    await grant(w, { userId: user.userId, permission: 'document.read', canDo: false, objectId: 'd1' });
    expectError(await read(user, { id: 'd1', ownerId: user.userId, status: 'draft' }), 403, 'PermissionDenied');
    expect((await read(user, { id: 'd3', ownerId: user.userId, status: 'draft' })).status).toBe(200);
  });

  it('roleBased from settings: a custom role holds what roleGrants give it (owner here), a superAdmin passes everything', async () => {
    const w = await world();
    expect((await as(t.http.get('/probe/reports'), w.store, w.owner)).status).toBe(200);
    const admin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    const decision = await t.http.get('/auth-api/permissions/report.write').set('Authorization', `Bearer ${admin.accessToken}`).expect(200);
    expect(decision.body).toMatchObject({ canDo: true, exceptions: [] });
    expect((await t.http.get('/probe/reports/x').set('Authorization', `Bearer ${admin.accessToken}`)).status).toBe(200);
  });

  it('a machine token carries its service\'s permissions, and grants in stores do not reach it', async () => {
    const w = await world();
    // a tenant-wide deny does not touch machines
    await grant(w, { permission: 'report.read', canDo: false });
    const call = async (service: string, key: KeyObject, path: string) => {
      const token = await mintMachineToken({ service, privateKey: key, method: 'GET', path, body: '' });
      return t.http.get(path).set(HEADER, w.store.codename).set('svc-machine-token', token);
    };
    expect((await call('billing', billing.privateKey, '/probe/reports')).status).toBe(200);
    expect((await call('billing', billing.privateKey, '/probe/reports/r1')).status).toBe(200);
    expectError(await call('reporting', reporting.privateKey, '/probe/reports'), 403, 'PermissionDenied');
  });

  it('the service\'s own routes: their permission decides, held by the roles the routes name until a grant changes it', async () => {
    const w = await world();
    const [user, admin, editor, key] = w.callers;
    const list = (c: Caller) => as(t.http.get('/auth-api/v1/users'), w.store, c.bearer);
    expectError(await list(user), 403, 'PermissionDenied');
    expect((await list(admin)).status).toBe(200);
    // what every role may do, a custom role included
    for (const c of [user, editor, key]) expect((await as(t.http.get(`/auth-api/v1/users/${c.userId}`), w.store, c.bearer)).status).toBe(200);
    // given to the tenantUser role: its users and their keys list users
    await grant(w, { roleId: 'tenantUser', permission: 'users.list', canDo: true });
    expect((await list(user)).status).toBe(200);
    expect((await list(key)).status).toBe(200);
    // denied to one administrator: that one no longer does
    await grant(w, { userId: admin.userId, permission: 'users.list', canDo: false });
    expectError(await list(admin), 403, 'PermissionDenied');
    const held = await as(t.http.get('/auth-api/permissions'), w.store, user.bearer).expect(200);
    const answers = Object.fromEntries((held.body.permissions as { permission: string; canDo: boolean }[]).map((p) => [p.permission, p.canDo]));
    expect(answers).toMatchObject({ 'users.list': true, 'users.read': true, 'users.delete': false, 'permissiongrants.write': false });
  });

  it('an API key never holds more than its creator: deleting the creator\'s grant ends the key\'s permission at once', async () => {
    const w = await world();
    const key = w.callers[3];
    const id = await grant(w, { userId: key.userId, permission: 'report.read', canDo: true });
    expect((await as(t.http.get('/probe/reports'), w.store, key.bearer)).status).toBe(200);
    await as(t.http.delete(`${GRANTS}/${id}`), w.store, w.owner).expect(200);
    expectError(await as(t.http.get('/probe/reports'), w.store, key.bearer), 403, 'PermissionDenied');
  });
});

describe('API keys: at most their creator\'s permissions', () => {
  beforeAll(async () => {
    t = await startApp({ settings: SETTINGS, imports: [ProbeModule] });
  });
  afterAll(() => t.close());

  const canRead = async (w: World, bearer: string) => (await as(t.http.get('/auth-api/permissions/report.read'), w.store, bearer).expect(200)).body.canDo;

  it('a tenantAdmin\'s tenantUser key gets no grant of tenantUser the admin lacks, and a deny on tenantAdmin reaches it', async () => {
    const w = await world();
    const [user, admin] = w.callers;
    const made = await as(t.http.post('/auth-api/v1/apikeys'), w.store, admin.bearer).send({ name: 'narrow', roles: ['tenantUser'] }).expect(201);
    const key: string = made.body.apiKey.key;
    await grant(w, { roleId: 'tenantUser', permission: 'report.read', canDo: true });
    expect(await canRead(w, user.bearer)).toBe(true);
    expect(await canRead(w, admin.bearer)).toBe(false);
    // the key's role has it, its creator does not: the key does not
    expect(await canRead(w, key)).toBe(false);
    expectError(await as(t.http.get('/probe/reports'), w.store, key), 403, 'PermissionDenied');
    // both have it: the key has it
    await grant(w, { userId: admin.userId, permission: 'report.read', canDo: true });
    expect(await canRead(w, admin.bearer)).toBe(true);
    expect((await as(t.http.get('/probe/reports'), w.store, key)).status).toBe(200);
    // a deny on the creator's role, which the key does not carry, still reaches the key
    await grant(w, { roleId: 'tenantAdmin', permission: 'report.read', canDo: false });
    expect(await canRead(w, admin.bearer)).toBe(false);
    expect(await canRead(w, key)).toBe(false);
    expectError(await as(t.http.get('/probe/reports'), w.store, key), 403, 'PermissionDenied');
    const listed = await as(t.http.get('/auth-api/permissions'), w.store, key).expect(200);
    expect((listed.body.permissions as { permission: string; canDo: boolean }[]).filter((p) => p.canDo && OWN.test(p.permission))).toEqual([]);
  });

  it('a key made with `permissions` acts with those only, each one its creator holds now (else 400)', async () => {
    const w = await world();
    const [user] = w.callers;
    const keys = (bearer: string, body: Record<string, unknown>) => as(t.http.post('/auth-api/v1/apikeys'), w.store, bearer).send(body);
    const made = await keys(w.owner, { name: 'reader', permissions: ['report.read', 'report.read'] }).expect(201);
    expect(made.body.apiKey).toMatchObject({ roles: ['tenantOwner'], permissions: ['report.read'] });
    const key: string = made.body.apiKey.key;
    const held = await as(t.http.get('/auth-api/permissions'), w.store, key).expect(200);
    expect((held.body.permissions as { permission: string; canDo: boolean }[]).filter((p) => p.canDo).map((p) => p.permission)).toEqual(['report.read']);
    expect((await as(t.http.get('/probe/reports'), w.store, key)).status).toBe(200);
    expect((await as(t.http.get('/auth-api/permissions/report.write'), w.store, key).expect(200)).body.canDo).toBe(false);
    // the creator's deny reaches a listed permission too
    await grant(w, { permission: 'report.read', canDo: false });
    expectError(await as(t.http.get('/probe/reports'), w.store, key), 403, 'PermissionDenied');
    // a permission the creator does not hold, or does not exist: refused, no key made
    expectError(await keys(user.bearer, { name: 'k', permissions: ['report.write'] }), 400, 'ApiKeyPermissionNotHeld');
    expectError(await keys(w.owner, { name: 'k', permissions: ['report.read', 'report.nope'] }), 400, 'PermissionUnknown');
    const mine = await as(t.http.get('/auth-api/v1/apikeys'), w.store, user.bearer).expect(200);
    expect(mine.body.apiKeys.map((k: { name: string }) => k.name)).toEqual(['probe']);
  });
});

describe('a custom role with a number value', () => {
  beforeAll(async () => {
    t = await startApp({ settings: { ...SETTINGS, customRoles: [...SETTINGS.customRoles!, { name: 'Auditor', value: 7 }] } });
  });
  afterAll(() => t.close());

  it('is assigned through PATCH /v1/users/:id, answered as its number, and given permissions like a built-in role', async () => {
    const w = await world();
    const [user, admin] = w.callers;
    const changed = await as(t.http.patch(`/auth-api/v1/users/${user.userId}`), w.store, w.owner).send({ roleId: 7 }).expect(200);
    expect(changed.body.user.roleId).toBe(7);
    expect((await as(t.http.get(`/auth-api/v1/users/${user.userId}`), w.store, w.owner).expect(200)).body.user.roleId).toBe(7);
    // compared as given: the text "7" names no role
    expectError(await as(t.http.patch(`/auth-api/v1/users/${admin.userId}`), w.store, w.owner).send({ roleId: '7' }), 403, 'RoleNotAssignable');
    expectError(await as(t.http.post(GRANTS), w.store, w.owner).send({ roleId: '7', permission: 'report.write', canDo: true }), 400, 'ValidationFailed');
    const made = await as(t.http.post(GRANTS), w.store, w.owner).send({ roleId: 7, permission: 'report.write', canDo: true }).expect(201);
    expect(made.body.permissionGrant.roleId).toBe(7);
    const canWrite = async (bearer: string) => (await as(t.http.get('/auth-api/permissions/report.write'), w.store, bearer).expect(200)).body.canDo;
    expect(await canWrite(user.bearer)).toBe(true);
    expect(await canWrite(admin.bearer)).toBe(false);
  });
});

describe('the route-policy snapshot', () => {
  it('shows a route\'s permission', async () => {
    const app = await startApp({ settings: SETTINGS, imports: [ProbeModule] });
    try {
      const probe = app.app.get(PolicyAudit).routes().filter((r) => r.path.startsWith('/probe/'));
      expect(probe).toEqual([
        { method: 'POST', path: '/probe/documents/read', policy: 'authenticated(user,apiKey,machine) permission=none' },
        { method: 'GET', path: '/probe/reports', policy: 'authenticated(user,apiKey,machine) permission=report.read' },
        { method: 'GET', path: '/probe/reports/:id', policy: 'authenticated(user,apiKey,machine) permission=none' },
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('the boot', () => {
  it('stops on an attribute rule that does not compile, naming the rule', async () => {
    const bad = startApp({ settings: { ...SETTINGS, attributeRules: [{ name: 'halfWritten', dataObject: 'document', whereClause: 'object.status ==', permissions: ['document.read'] }] } });
    await expect(bad).rejects.toThrow(/attributeRules\.halfWritten: whereClause does not compile/);
  });

  it('stops on a permission listed twice or a grant of an unknown one', async () => {
    await expect(startApp({ settings: { ...SETTINGS, permissionGroups: [{ groupName: 'a', permissions: ['p.one'] }, { groupName: 'b', permissions: ['p.one'] }], roleGrants: {}, attributeRules: [], machineTokens: { services: [], machineToMachineBlockList: [], allowedM2MClients: [] } } })).rejects.toThrow(/"p\.one" is listed twice/);
    await expect(startApp({ settings: { ...SETTINGS, roleGrants: { tenantUser: ['report.destroy'] } } })).rejects.toThrow(/roleGrants\.tenantUser: unknown permission "report\.destroy"/);
    await expect(startApp({ settings: { ...SETTINGS, permissionGroups: [{ groupName: 'mine', permissions: ['users.list'] }], roleGrants: {}, attributeRules: [], machineTokens: { services: [], machineToMachineBlockList: [], allowedM2MClients: [] } } })).rejects.toThrow(/"users\.list" is listed twice \(group "mine"\): it is one of the service's own/);
  });
});
