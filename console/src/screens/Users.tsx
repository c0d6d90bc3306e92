import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import type { components } from '../api/schema';
import { rolesOf, storeName } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Pager, Scope, SearchForm, Section, Select, Table, useAction, useLoad, when } from '../ui';
import { roleOptions } from './roles';

type User = components['schemas']['UserResponse'];
const PAGE = 20;

export const userLabel = (u: { email?: string | null; mobile?: string | null; id: string }) => u.email ?? u.mobile ?? u.id;

// The looked-at store's users: search, pages, create, edit, delete, reset factors, sessions.
// `?user=<id>` opens one (the audit log links its users here), on this page or not.
export default function Users({ session }: ScreenProps) {
  const [page, setPage] = useState(1);
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<string | undefined>(() => new URLSearchParams(location.search).get('user') ?? undefined);
  const [notice, setNotice] = useState<string>();
  // `search` is sent only when there is one (the route refuses an empty one).
  const list = useLoad(
    () => must(api.GET('/auth-api/v1/users', { params: { query: { pageNumber: page, pageRowCount: PAGE, ...(query && { search: query }) } } })),
    [page, query],
  );
  const users = list.data?.users ?? [];
  const onPage = users.find((u) => u.id === selected);
  // A user off this page (a link from the audit log) is read on its own.
  const other = useLoad(async () => (selected && list.data && !onPage ? (await must(api.GET('/auth-api/v1/users/{id}', { params: { path: { id: selected } } }))).user : undefined), [selected, list.data]);
  const user = onPage ?? other.data;
  const select = (id?: string) => {
    setSelected(id);
    setNotice(undefined);
    history.replaceState(null, '', id ? `?user=${id}` : location.pathname);
  };
  return (
    <>
      <h1>Users</h1>
      <Scope session={session} />
      <Section title="Find users">
        <SearchForm
          label="Search by email, mobile or name"
          onSearch={(text) => {
            setPage(1);
            setQuery(text);
          }}
        />
        <ErrorText error={list.error ?? other.error} />
        <Notice text={notice} />
        <Table columns={['Name', 'Email / mobile', 'Role', 'Active']} actions caption="Users">
          {users.map((u) => (
            <tr key={u.id} aria-selected={u.id === selected}>
              <td>{u.fullname || [u.name, u.surname].filter(Boolean).join(' ') || '—'}</td>
              <td>{u.email ?? u.mobile ?? '—'}</td>
              <td>{rolesOf(u).join(', ')}</td>
              <td>{u.isActive ? 'yes' : 'no'}</td>
              <td>
                <button type="button" class="secondary" onClick={() => select(u.id === selected ? undefined : u.id)} aria-label={`Edit ${userLabel(u)}`}>
                  {u.id === selected ? 'Close' : 'Edit'}
                </button>
              </td>
            </tr>
          ))}
          {!list.loading && !list.error && !users.length && (
            <tr>
              <td colSpan={5}>No users{query && ` match "${query}"`}.</td>
            </tr>
          )}
        </Table>
        {list.data?.paging && <Pager page={page} pages={list.data.paging.pageCount} total={list.data.paging.totalRowCount} onPage={setPage} />}
      </Section>
      {user && (
        <EditUser
          key={user.id}
          user={user}
          session={session}
          onChanged={list.reload}
          onDeleted={(label) => {
            select(undefined);
            setNotice(`${label} was deleted from ${storeName(session)}.`);
            list.reload();
          }}
        />
      )}
      <CreateUser session={session} onCreated={list.reload} />
    </>
  );
}

function CreateUser({ session, onCreated }: ScreenProps & { onCreated: () => void }) {
  const roles = roleOptions(session);
  const [email, setEmail] = useState('');
  const [fullname, setFullname] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState(roles[roles.length - 1].value);
  const [done, setDone] = useState<string>();
  const action = useAction();
  return (
    <Section title="Create a user">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setDone(undefined);
          void action.run(async () => {
            await must(api.POST('/auth-api/users', { body: { email: email.trim(), fullname: fullname.trim() || undefined, password, roleId: role as never } }));
            setDone(`${email.trim()} was created in ${storeName(session)}.`);
            setEmail('');
            setFullname('');
            setPassword('');
            onCreated();
          });
        }}
      >
        <Field label="New user's email" type="email" value={email} onInput={setEmail} required autocomplete="off" />
        <Field label="Full name" value={fullname} onInput={setFullname} autocomplete="off" />
        <Field label="Initial password" type="password" value={password} onInput={setPassword} required autocomplete="new-password" />
        <Select label="Role" value={role} options={roles} onChange={setRole} />
        <ErrorText error={action.error} />
        <Notice text={done} />
        <button disabled={action.busy}>Create the user</button>
      </form>
    </Section>
  );
}

function EditUser({ user, session, onChanged, onDeleted }: ScreenProps & { user: User; onChanged: () => void; onDeleted: (label: string) => void }) {
  const roles = roleOptions(session);
  const current = rolesOf(user)[0] ?? '';
  const [fullname, setFullname] = useState(user.fullname ?? '');
  const [role, setRole] = useState(current);
  const [active, setActive] = useState(user.isActive);
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const sessions = useLoad(() => must(api.GET('/auth-api/v1/users/{id}/sessions', { params: { path: { id: user.id } } })), [user.id]);
  const label = userLabel(user);
  const where = storeName(session);
  const options = roles.some((r) => r.value === current) ? roles : [{ value: current, label: current }, ...roles];
  return (
    <Section title={`Edit ${label}`}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setNotice(undefined);
          void action.run(async () => {
            const body: Record<string, unknown> = {};
            if (fullname !== (user.fullname ?? '')) body.fullname = fullname;
            if (role !== current) body.roleId = role;
            if (active !== user.isActive) body.isActive = active;
            await must(api.PATCH('/auth-api/v1/users/{id}', { params: { path: { id: user.id } }, body: body as never }));
            setNotice(`Saved in ${where}.`);
            onChanged();
          });
        }}
      >
        <Field label="Full name" value={fullname} onInput={setFullname} />
        <Select label="Role" value={role} options={options} onChange={setRole} />
        <div class="field check">
          <input id={`active-${user.id}`} type="checkbox" checked={active} onChange={(e) => setActive((e.target as HTMLInputElement).checked)} />
          <label for={`active-${user.id}`}>Active (may sign in)</label>
        </div>
        <ErrorText error={action.error} />
        <Notice text={notice} />
        <div class="row start">
          <button disabled={action.busy}>Save</button>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            onClick={() =>
              confirm(`Remove ${label}'s authenticator app, recovery codes and passkeys, and end its sessions?`) &&
              action.run(async () => {
                await must(api.DELETE('/auth-api/v1/users/{id}/mfa', { params: { path: { id: user.id } } }));
                setNotice(`Its second factors were removed and its sessions ended, in ${where}.`);
                sessions.reload();
              })
            }
          >
            Reset second factors
          </button>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            onClick={() =>
              confirm(`Delete ${label} from ${where}? Its sessions end and its API keys stop working; this cannot be undone.`) &&
              action.run(async () => {
                await must(api.DELETE('/auth-api/v1/users/{id}', { params: { path: { id: user.id } } }));
                onDeleted(label);
              })
            }
          >
            Delete the user
          </button>
        </div>
      </form>
      <h3>Sessions</h3>
      <ErrorText error={sessions.error} />
      <ul class="list" aria-label={`Sessions of ${label}`}>
        {(sessions.data?.sessions ?? []).map((s) => (
          <li key={s.sessionId}>
            {[s.device.browser, s.device.os, s.device.type].filter(Boolean).join(' · ')} — {s.ip ?? 'no address'} — last seen {when(s.lastSeenAt)}
            {s.current && ' (this console)'}
          </li>
        ))}
        {sessions.data && !sessions.data.sessions.length && <li>No live session.</li>}
      </ul>
      <button
        type="button"
        class="danger"
        disabled={action.busy || !sessions.data?.sessions.length}
        onClick={() =>
          action.run(async () => {
            const { ended } = await must(api.DELETE('/auth-api/v1/users/{id}/sessions', { params: { path: { id: user.id } } }));
            setNotice(`${ended} session${ended === 1 ? '' : 's'} ended, in ${where}.`);
            sessions.reload();
          })
        }
      >
        End its sessions
      </button>
    </Section>
  );
}
