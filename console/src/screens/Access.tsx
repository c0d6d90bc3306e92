import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import type { components } from '../api/schema';
import { storeName } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Off, Scope, Section, Select, Table, useAction, useLoad } from '../ui';
import { roleOptions } from './roles';

// Access control of the looked-at store (docs/access-control.md): user groups and their
// members, permission grants, and what the signed-in administrator may do (/permissions).
export default function Access({ session }: ScreenProps) {
  const users = useLoad(async () => (await must(api.GET('/auth-api/v1/users', { params: { query: { pageRowCount: 100 } } }))).users, []);
  const groups = useLoad(async () => (await must(api.GET('/auth-api/v1/usergroups', { params: { query: { pageRowCount: 100 } } }))).userGroups, []);
  // Every permission the service knows, and whether the administrator holds it here: the grant
  // form picks from these names.
  const mine = useLoad(() => must(api.GET('/auth-api/permissions')), []);
  const userName = (id: string | null) => {
    const u = users.data?.find((x) => x.id === id);
    return u ? (u.email ?? u.mobile ?? u.id) : (id ?? '—');
  };
  const where = storeName(session);
  return (
    <>
      <h1>Access</h1>
      <Scope session={session} />
      <Groups where={where} groups={groups} users={users.data ?? []} userName={userName} />
      <Grants session={session} groupsOn={!groups.off} groups={groups.data ?? []} users={users.data ?? []} permissions={mine.data?.permissions ?? []} userName={userName} />
      <Mine mine={mine} />
    </>
  );
}

type Loaded<T> = { data?: T; error?: string; off?: { what: string; key: string }; reload: () => void };
type Decision = components['schemas']['PermissionDecision'];
type Group = { id: string; groupName: string; storeId: string | null };
type User = { id: string; email?: string | null; mobile?: string | null };

function Groups({ where, groups, users, userName }: { where: string; groups: Loaded<Group[]>; users: User[]; userName: (id: string | null) => string }) {
  const [name, setName] = useState('');
  const [open, setOpen] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  if (groups.off)
    return (
      <Section title="User groups">
        <Off off={groups.off} />
      </Section>
    );
  return (
    <Section title="User groups">
      <ErrorText error={groups.error ?? action.error} />
      <Notice text={notice} />
      <ul class="list" aria-label="Groups">
        {(groups.data ?? []).map((g) => (
          <li key={g.id}>
            <div class="row">
              <span>
                <strong>{g.groupName}</strong>
                {g.storeId === null && ' (global)'}
              </span>
              <span>
                <button type="button" class="secondary" aria-expanded={open === g.id} onClick={() => setOpen(open === g.id ? undefined : g.id)}>
                  Members
                </button>{' '}
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete the group ${g.groupName}`}
                  onClick={() =>
                    confirm(`Delete the group ${g.groupName}, its memberships and its grants?`) &&
                    action.run(async () => {
                      await must(api.DELETE('/auth-api/v1/usergroups/{id}', { params: { path: { id: g.id } } }));
                      setNotice(`The group ${g.groupName} was deleted from ${where}.`);
                      groups.reload();
                    })
                  }
                >
                  Delete
                </button>
              </span>
            </div>
            {open === g.id && <Members where={where} group={g} users={users} userName={userName} />}
          </li>
        ))}
        {groups.data && !groups.data.length && <li>No groups.</li>}
      </ul>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setNotice(undefined);
          void action.run(async () => {
            await must(api.POST('/auth-api/v1/usergroups', { body: { groupName: name.trim() } }));
            setNotice(`The group ${name.trim()} was created in ${where}.`);
            setName('');
            groups.reload();
          });
        }}
      >
        <Field label="New group's name" value={name} onInput={setName} required />
        <button disabled={action.busy}>Create the group</button>
      </form>
    </Section>
  );
}

function Members({ where, group, users, userName }: { where: string; group: Group; users: User[]; userName: (id: string | null) => string }) {
  const members = useLoad(async () => (await must(api.GET('/auth-api/v1/usergroupmembers', { params: { query: { groupId: group.id, pageRowCount: 100 } } }))).userGroupMembers, [group.id]);
  const [userId, setUserId] = useState('');
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  return (
    <div class="nested">
      <ErrorText error={members.error ?? action.error} />
      <Notice text={notice} />
      <ul class="list" aria-label={`Members of ${group.groupName}`}>
        {(members.data ?? []).map((m) => (
          <li key={m.id} class="row">
            <span>{userName(m.userId)}</span>
            <button
              type="button"
              class="danger"
              onClick={() =>
                action.run(async () => {
                  await must(api.DELETE('/auth-api/v1/usergroupmembers/{id}', { params: { path: { id: m.id } } }));
                  setNotice(`${userName(m.userId)} left ${group.groupName} in ${where}.`);
                  members.reload();
                })
              }
            >
              Remove
            </button>
          </li>
        ))}
        {members.data && !members.data.length && <li>No members.</li>}
      </ul>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await must(api.POST('/auth-api/v1/usergroupmembers', { body: { groupId: group.id, userId } }));
            setNotice(`${userName(userId)} joined ${group.groupName} in ${where}.`);
            members.reload();
          });
        }}
      >
        <Select label="User to add" value={userId} options={[{ value: '', label: 'Choose a user' }, ...users.map((u) => ({ value: u.id, label: userName(u.id) }))]} onChange={setUserId} />
        <button disabled={action.busy || !userId}>Add</button>
      </form>
    </div>
  );
}

function Grants({ session, groupsOn, groups, users, permissions, userName }: ScreenProps & { groupsOn: boolean; groups: Group[]; users: User[]; permissions: Decision[]; userName: (id: string | null) => string }) {
  const grants = useLoad(async () => (await must(api.GET('/auth-api/v1/permissiongrants', { params: { query: { pageRowCount: 100 } } }))).permissionGrants, []);
  const [permission, setPermission] = useState('');
  const [kind, setKind] = useState<'roleId' | 'userId' | 'groupId' | 'store'>('roleId');
  const [to, setTo] = useState('');
  const [canDo, setCanDo] = useState('true');
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const targets =
    kind === 'roleId'
      ? roleOptions(session)
      : kind === 'userId'
        ? users.map((u) => ({ value: u.id, label: userName(u.id) }))
        : kind === 'groupId'
          ? groups.map((g) => ({ value: g.id, label: g.groupName }))
          : [];
  const groupName = (id: string | null) => groups.find((g) => g.id === id)?.groupName ?? id;
  const where = storeName(session);
  // A permission is granted or denied only by someone who holds it (403 PermissionNotHeld).
  const names = [
    { value: '', label: 'Choose a permission' },
    ...permissions.map((p) => ({ value: p.permission, label: p.canDo ? p.permission : `${p.permission} (you do not hold it)`, disabled: !p.canDo })),
  ];
  return (
    <Section title="Permission grants">
      <ErrorText error={grants.error ?? action.error} />
      <Notice text={notice} />
      <Table columns={['Permission', 'To', 'Object', 'Allows']} actions>
        {(grants.data ?? []).map((g) => (
          <tr key={g.id}>
            <td>
              <code>{g.permission}</code>
            </td>
            <td>{g.roleId !== null ? `role ${g.roleId}` : g.userId ? `user ${userName(g.userId)}` : g.groupId ? `group ${groupName(g.groupId)}` : 'the whole store'}</td>
            <td>{g.objectId ?? 'any'}</td>
            <td>{g.canDo ? 'yes' : 'no (denied)'}</td>
            <td>
              <button
                type="button"
                class="danger"
                aria-label={`Delete the grant of ${g.permission}`}
                onClick={() =>
                  action.run(async () => {
                    await must(api.DELETE('/auth-api/v1/permissiongrants/{id}', { params: { path: { id: g.id } } }));
                    setNotice(`The grant of ${g.permission} was deleted from ${where}.`);
                    grants.reload();
                  })
                }
              >
                Delete
              </button>
            </td>
          </tr>
        ))}
        {grants.data && !grants.data.length && (
          <tr>
            <td colSpan={5}>No grants.</td>
          </tr>
        )}
      </Table>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setNotice(undefined);
          void action.run(async () => {
            const target = kind === 'store' ? {} : { [kind]: to };
            await must(api.POST('/auth-api/v1/permissiongrants', { body: { permission, canDo: canDo === 'true', ...target } }));
            setNotice(`The grant of ${permission} was added in ${where}.`);
            grants.reload();
          });
        }}
      >
        <Select label="Permission" value={permission} options={names} onChange={setPermission} />
        <Select
          label="Granted to"
          value={kind}
          options={[
            { value: 'roleId', label: 'A role' },
            { value: 'userId', label: 'A user' },
            ...(groupsOn ? [{ value: 'groupId', label: 'A group' }] : []),
            { value: 'store', label: 'The whole store' },
          ]}
          onChange={(v) => {
            setKind(v as typeof kind);
            setTo('');
          }}
        />
        {kind !== 'store' && <Select label="Which" value={to} options={[{ value: '', label: 'Choose' }, ...targets]} onChange={setTo} />}
        <Select
          label="Effect"
          value={canDo}
          options={[
            { value: 'true', label: 'Allow' },
            { value: 'false', label: 'Deny' },
          ]}
          onChange={setCanDo}
        />
        <div class="row">
          <button disabled={action.busy || !permission || (kind !== 'store' && !to)}>Add the grant</button>
        </div>
      </form>
    </Section>
  );
}

// What the signed-in administrator may do in the looked-at store.
function Mine({ mine }: { mine: { data?: { permissions: Decision[] }; error?: string } }) {
  return (
    <Section title="What you may do here">
      <ErrorText error={mine.error} />
      <ul class="list perms">
        {(mine.data?.permissions ?? []).map((p) => (
          <li key={p.permission}>
            <code>{p.permission}</code>: {p.canDo ? 'yes' : 'no'}
            {p.exceptions.length > 0 && ` (except ${p.exceptions.map((x) => `${x.objectId}: ${x.canDo ? 'yes' : 'no'}`).join(', ')})`}
          </li>
        ))}
      </ul>
    </Section>
  );
}
