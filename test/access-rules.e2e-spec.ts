import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import type { SettingsOverrides } from '../src/settings.js';
import { login, PASSWORD, registerStore, startApp, SUPER_ADMIN, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// Who may change what affects whom (issue 22): every route that changes grants, groups or
// memberships x the caller x the user the change affects, as a matrix. Every fixture (groups,
// memberships, grants) is set by the store's owner, so a change aimed at the caller itself takes
// away something a higher rank set. The expected answers come from the rule as stated below, not
// from the service.

const HEADER = 'svc-store-codename';
const GROUPS = '/auth-api/v1/usergroups';
const MEMBERS = '/auth-api/v1/usergroupmembers';
const GRANTS = '/auth-api/v1/permissiongrants';

const SETTINGS: SettingsOverrides = {
  pbacIsActive: true,
  userGroupsActive: true,
  userGroupsInTenantLevel: true,
  permissionGroups: [{ groupName: 'reports', permissions: ['report.read', 'report.export'] }],
  // every caller holds what it grants in the matrix (report.read); the owner's fixtures deny report.export
  roleGrants: { tenantOwner: ['report.read', 'report.export'], tenantAdmin: ['report.read'], tenantUser: ['report.read'] },
};

type CallerKind = 'owner' | 'tenantAdmin' | 'tenantUser granted the write permissions' | 'tenantUser';
type Target = 'above' | 'equal' | 'below' | 'self';

// The rule. The store's owner changes anything in its store. Anyone else may manage itself and,
// as an administrator, users of its rank or below (the user-management rule), never one above.
// A grant is set or lifted only on users one may manage other than oneself (through a group:
// each member). A membership is added, moved or ended (also by renaming or deleting its group)
// only for users one may manage, and one never takes from oneself what a higher rank set.
const manages = (c: CallerKind, t: Target) => c === 'owner' || t === 'self' || (c === 'tenantAdmin' && t !== 'above');
const outranks = (c: CallerKind, t: Target) => c === 'owner' || (manages(c, t) && t !== 'self');
const takesFromSelf = (c: CallerKind, t: Target) => c !== 'owner' && t === 'self';
// The write routes take permissions a tenantUser holds only when granted them.
const reaches = (c: CallerKind) => c !== 'tenantUser';

interface Member {
  id: string;
  bearer: string;
}

interface World {
  store: RegisteredStore;
  owner: string;
  caller: Member;
  targets: Partial<Record<Target, Member>>;
}

let t: TestApp;
let root: string;

function as(req: ReturnType<TestApp['http']['get']>, store: RegisteredStore, bearer: string) {
  return req.set(HEADER, store.codename).set('Authorization', `Bearer ${bearer}`);
}

async function addUser(store: RegisteredStore, bearer: string, roleId: string): Promise<Member> {
  const email = uniqueEmail();
  const res = await as(t.http.post('/auth-api/users'), store, bearer).send({ email, password: PASSWORD, fullname: 'Member', roleId }).expect(201);
  return { id: res.body.user.id, bearer: (await login(t.http, email, PASSWORD, store.codename)).accessToken };
}

// A fresh store per caller kind, with the caller and a user above, beside and below it (none above
// the owner: a super administrator is no member of a store; none below a tenantUser).
async function world(kind: CallerKind): Promise<World> {
  const store = await registerStore(t.http);
  const owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  const self = { id: store.ownerId, bearer: owner };
  if (kind === 'owner') {
    // a second tenantOwner: only a super administrator assigns that role
    const [equal, below] = await Promise.all([addUser(store, root, 'tenantOwner'), addUser(store, owner, 'tenantAdmin')]);
    return { store, owner, caller: self, targets: { equal, below, self } };
  }
  if (kind === 'tenantAdmin') {
    const [caller, equal, below] = await Promise.all(['tenantAdmin', 'tenantAdmin', 'tenantUser'].map((r) => addUser(store, owner, r)));
    return { store, owner, caller, targets: { above: self, equal, below, self: caller } };
  }
  const [caller, above, equal] = await Promise.all(['tenantUser', 'tenantAdmin', 'tenantUser'].map((r) => addUser(store, owner, r)));
  if (kind !== 'tenantUser') {
    for (const permission of ['permissiongrants.write', 'usergroups.write', 'usergroupmembers.write']) {
      await as(t.http.post(GRANTS), store, owner).send({ userId: caller.id, permission, canDo: true }).expect(201);
    }
  }
  return { store, owner, caller, targets: { above, equal, self: caller } };
}

// Fixtures, all set by the owner.
async function group(w: World, members: string[]): Promise<{ id: string; memberships: string[] }> {
  const g = await as(t.http.post(GROUPS), w.store, w.owner).send({ groupName: 'G' }).expect(201);
  const memberships = [];
  for (const userId of members) memberships.push((await as(t.http.post(MEMBERS), w.store, w.owner).send({ groupId: g.body.userGroup.id, userId }).expect(201)).body.userGroupMember.id as string);
  return { id: g.body.userGroup.id, memberships };
}

// On one object, so that a deny left in place (refused cases) takes nothing the owner needs later.
async function ownerDeny(w: World, subject: Record<string, string>): Promise<string> {
  return (await as(t.http.post(GRANTS), w.store, w.owner).send({ ...subject, permission: 'report.export', canDo: false, objectId: 'fixture' }).expect(201)).body.permissionGrant.id;
}

const status = async (w: World, path: string) => (await as(t.http.get(path), w.store, w.owner)).status;

interface Run {
  res: Response;
  // Whether the owner sees the change made (for the routes that change what exists).
  changed?: () => Promise<boolean>;
}

interface Route {
  name: string;
  // false: the route affects nobody yet (a new group), run once per caller
  targeted: boolean;
  ok: 200 | 201;
  refusal: 'GrantTargetNotManaged' | 'Forbidden';
  allowed: (c: CallerKind, t: Target) => boolean;
  run: (w: World, target: Member) => Promise<Run>;
}

// The matrix grants deny report.read on one object only, so they change nothing for later cases.
const MATRIX_DENY = { permission: 'report.read', canDo: false, objectId: 'matrix' };

const ROUTES: Route[] = [
  {
    name: 'POST /v1/permissiongrants to the user',
    targeted: true,
    ok: 201,
    refusal: 'GrantTargetNotManaged',
    allowed: outranks,
    run: async (w, target) => ({ res: await as(t.http.post(GRANTS), w.store, w.caller.bearer).send({ ...MATRIX_DENY, userId: target.id }) }),
  },
  {
    name: 'POST /v1/permissiongrants to a group holding the user',
    targeted: true,
    ok: 201,
    refusal: 'GrantTargetNotManaged',
    allowed: outranks,
    run: async (w, target) => {
      const g = await group(w, [target.id]);
      return { res: await as(t.http.post(GRANTS), w.store, w.caller.bearer).send({ ...MATRIX_DENY, groupId: g.id }) };
    },
  },
  {
    name: 'DELETE /v1/permissiongrants/:id, the owner\'s deny on the user',
    targeted: true,
    ok: 200,
    refusal: 'GrantTargetNotManaged',
    allowed: outranks,
    run: async (w, target) => {
      const id = await ownerDeny(w, { userId: target.id });
      return { res: await as(t.http.delete(`${GRANTS}/${id}`), w.store, w.caller.bearer), changed: async () => (await status(w, `${GRANTS}/${id}`)) === 404 };
    },
  },
  {
    name: 'DELETE /v1/permissiongrants/:id, the owner\'s deny on a group holding the user',
    targeted: true,
    ok: 200,
    refusal: 'GrantTargetNotManaged',
    allowed: outranks,
    run: async (w, target) => {
      const g = await group(w, [target.id]);
      const id = await ownerDeny(w, { groupId: g.id });
      return { res: await as(t.http.delete(`${GRANTS}/${id}`), w.store, w.caller.bearer), changed: async () => (await status(w, `${GRANTS}/${id}`)) === 404 };
    },
  },
  {
    name: 'POST /v1/usergroups',
    targeted: false,
    ok: 201,
    refusal: 'Forbidden',
    allowed: () => true,
    run: async (w) => ({ res: await as(t.http.post(GROUPS), w.store, w.caller.bearer).send({ groupName: 'Mine' }) }),
  },
  {
    name: 'PATCH /v1/usergroups/:id, a group holding the user',
    targeted: true,
    ok: 200,
    refusal: 'Forbidden',
    allowed: manages,
    run: async (w, target) => {
      const g = await group(w, [target.id]);
      const res = await as(t.http.patch(`${GROUPS}/${g.id}`), w.store, w.caller.bearer).send({ groupName: 'Renamed' });
      return { res, changed: async () => (await as(t.http.get(`${GROUPS}/${g.id}`), w.store, w.owner).expect(200)).body.userGroup.groupName === 'Renamed' };
    },
  },
  {
    name: 'DELETE /v1/usergroups/:id, a group holding the user, with the owner\'s deny',
    targeted: true,
    ok: 200,
    refusal: 'Forbidden',
    allowed: (c, tg) => manages(c, tg) && !takesFromSelf(c, tg),
    run: async (w, target) => {
      const g = await group(w, [target.id]);
      await ownerDeny(w, { groupId: g.id });
      return { res: await as(t.http.delete(`${GROUPS}/${g.id}`), w.store, w.caller.bearer), changed: async () => (await status(w, `${GROUPS}/${g.id}`)) === 404 };
    },
  },
  {
    name: 'POST /v1/usergroupmembers adding the user',
    targeted: true,
    ok: 201,
    refusal: 'Forbidden',
    allowed: manages,
    run: async (w, target) => {
      const g = await group(w, []);
      return { res: await as(t.http.post(MEMBERS), w.store, w.caller.bearer).send({ groupId: g.id, userId: target.id }) };
    },
  },
  {
    name: 'PATCH /v1/usergroupmembers/:id, the user\'s membership to another group',
    targeted: true,
    ok: 200,
    refusal: 'Forbidden',
    allowed: (c, tg) => manages(c, tg) && !takesFromSelf(c, tg),
    run: async (w, target) => {
      const g = await group(w, [target.id]);
      const other = await group(w, []);
      const url = `${MEMBERS}/${g.memberships[0]}`;
      const res = await as(t.http.patch(url), w.store, w.caller.bearer).send({ groupId: other.id });
      return { res, changed: async () => (await as(t.http.get(url), w.store, w.owner).expect(200)).body.userGroupMember.groupId === other.id };
    },
  },
  {
    name: 'DELETE /v1/usergroupmembers/:id, the user\'s membership',
    targeted: true,
    ok: 200,
    refusal: 'Forbidden',
    allowed: (c, tg) => manages(c, tg) && !takesFromSelf(c, tg),
    run: async (w, target) => {
      const g = await group(w, [target.id]);
      const url = `${MEMBERS}/${g.memberships[0]}`;
      return { res: await as(t.http.delete(url), w.store, w.caller.bearer), changed: async () => (await status(w, url)) === 404 };
    },
  },
];

const TARGETS: Record<CallerKind, Target[]> = {
  owner: ['equal', 'below', 'self'],
  tenantAdmin: ['above', 'equal', 'below', 'self'],
  'tenantUser granted the write permissions': ['above', 'equal', 'self'],
  tenantUser: ['above', 'equal', 'self'],
};

interface Case {
  route: Route;
  target: Target | null;
  expected: { status: number; errCode?: string; changed?: boolean };
  title: string;
}

function cases(kind: CallerKind): Case[] {
  return ROUTES.flatMap((route) =>
    (route.targeted ? TARGETS[kind] : [null]).map((target) => {
      const allowed = reaches(kind) && route.allowed(kind, target ?? 'self');
      const errCode = reaches(kind) ? route.refusal : 'PermissionDenied';
      const expected = { status: allowed ? route.ok : 403, ...(!allowed && { errCode }), ...(route.name.match(/^(PATCH|DELETE)/) && { changed: allowed }) };
      const title = `${route.name}${target ? `, the user ${target === 'self' ? 'itself' : `${target} it`}` : ''}: ${allowed ? route.ok : `403 ${errCode}`}`;
      return { route, target, expected, title };
    }),
  );
}

const KINDS: CallerKind[] = ['owner', 'tenantAdmin', 'tenantUser granted the write permissions', 'tenantUser'];

describe('who may change what affects whom: grant and group routes x caller x target', () => {
  beforeAll(async () => {
    t = await startApp({ settings: SETTINGS });
    root = (await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password)).accessToken;
  });
  afterAll(() => t.close());

  describe.each(KINDS)('caller: %s', (kind) => {
    let w: World;
    beforeAll(async () => {
      w = await world(kind);
    });

    it.each(cases(kind))('$title', async ({ route, target, expected }) => {
      const { res, changed } = await route.run(w, target ? w.targets[target]! : w.caller);
      const seen = { status: res.status, ...(res.status >= 400 && { errCode: res.body.errCode }), ...(changed && { changed: await changed() }) };
      expect(seen).toEqual(expected);
    });
  });
});
