import { useEffect, useState } from 'preact/hooks';
import { api, featureOff, must, own, sentenceOf, type FeatureOff } from '../api/client';
import { AUDIT_ACTIONS } from '../api/audit-actions';
import type { components } from '../api/schema';
import { looksElsewhere, session as currentSession, type Session } from '../api/session';
import type { ScreenProps } from '../nav';
import { BASE } from '../router';
import { ErrorText, Field, Notice, Off, plural, Scope, Section, Select, Table, useAction, useLoad, when } from '../ui';
import { userLabel } from './Users';

type Entry = components['schemas']['AuditEntryResponse'];
interface Filters {
  action: string;
  outcome: '' | 'success' | 'failure';
  actorId: string;
  targetId: string;
  ip: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { action: '', outcome: '', actorId: '', targetId: '', ip: '', from: '', to: '' };
const PAGE = 50;

// The shipped SSE subscription that carries audit entries as they are written (settings
// eventSubscriptions, `console-audit`: one topic per audit action, named by the action; a test
// keeps it in step with the catalogue).
const LIVE_SUBSCRIPTION = 'console-audit';
// Does a live entry pass the filters the list shows? (The instants are the server's.)
function matches(e: Entry, f: Filters): boolean {
  const action = f.action.trim();
  if (action && (action.endsWith('*') ? !e.action.startsWith(action.slice(0, -1)) : e.action !== action)) return false;
  if (f.outcome && e.outcome !== f.outcome) return false;
  if (f.actorId && (e.actor as { id?: string | null }).id !== f.actorId.trim()) return false;
  if (f.targetId && e.target?.id !== f.targetId.trim()) return false;
  if (f.ip && e.ip !== f.ip.trim()) return false;
  return !f.to;
}

// Follows new entries over the event channel (SSE): EventSource sends no headers, so the token
// and the store go in the query (`access_token`, `_store`), as docs/events.md says.
function useLive(on: boolean, onEntry: (e: Entry) => void): { error?: string; off?: FeatureOff; following: boolean } {
  const [error, setError] = useState<string>();
  const [off, setOff] = useState<FeatureOff>();
  const [following, setFollowing] = useState(false);
  useEffect(() => {
    if (!on) return;
    const s = currentSession()!;
    const query = new URLSearchParams({ topics: AUDIT_ACTIONS.join(','), access_token: s.accessToken ?? '', ...(s.target && { _store: s.target }) });
    const source = new EventSource(`/events/${LIVE_SUBSCRIPTION}/stream?${query}`);
    setError(undefined);
    setOff(undefined);
    source.addEventListener('subscribed', () => setFollowing(true));
    source.addEventListener('event', (m) => {
      const data = (JSON.parse((m as MessageEvent).data) as { data: Entry | { entry: Entry } }).data;
      onEntry('entry' in data ? data.entry : data);
    });
    source.addEventListener('error', (m) => {
      const text = (m as MessageEvent).data;
      const answer = text ? JSON.parse(text) : undefined;
      // The settings may drop the console's subscription: live entries are then off.
      if (featureOff(answer)) setOff({ what: `Live entries (subscription ${LIVE_SUBSCRIPTION}) are`, key: 'eventSubscriptions' });
      else if (answer) setError(sentenceOf(answer));
      else if (source.readyState === EventSource.CLOSED) setError('The live stream could not be opened.');
      setFollowing(false);
    });
    return () => {
      source.close();
      setFollowing(false);
    };
  }, [on]);
  return { error, off, following };
}

// The query the audit routes take: the filters set, instants in ISO form.
function queryOf(f: Filters): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) if (v) q[k] = k === 'from' || k === 'to' ? new Date(v).toISOString() : v.trim();
  return q;
}

// The looked-at store's audit log: the API's filters, keyset pages (nextCursor → after=),
// exports.
export default function AuditLog({ session }: ScreenProps) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  // The cursors of the pages before the current one, for Previous.
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const page = useLoad(() => must(api.GET('/auth-api/v1/auditlogs', { params: { query: { ...queryOf(filters), pageRowCount: PAGE, ...(after && { after }) } } })), [filters, after]);
  const exporting = useAction();
  const [live, setLive] = useState(false);
  const [arrived, setArrived] = useState<Entry[]>([]);
  // Live entries go above the first page only.
  const liveState = useLive(live && !cursors.length, (e) => setArrived((list) => (list.some((x) => x.id === e.id) ? list : [e, ...list])));
  useEffect(() => setArrived([]), [filters, after]);
  const set = (k: keyof Filters) => (v: string) => setDraft({ ...draft, [k]: v });
  const next = (page.data as { nextCursor?: string } | undefined)?.nextCursor;
  const loaded = page.data?.auditLogs ?? [];
  const entries = [...arrived.filter((e) => matches(e, filters) && !loaded.some((x) => x.id === e.id)), ...loaded];
  const names = useNames(session, entries);

  const download = (format: 'ndjson' | 'csv') =>
    exporting.run(async () => {
      // A call rather than a link: the export needs the Bearer header and the store header.
      const file = await must(api.GET('/auth-api/v1/auditlogs/export', { params: { query: { ...queryOf(filters), format } }, parseAs: 'blob' }));
      const url = URL.createObjectURL(file);
      const a = document.createElement('a');
      a.href = url;
      a.download = `audit-log.${format}`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });

  return (
    <>
      <h1>Audit log</h1>
      <Scope session={session} />
      <Section title="Filters">
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setCursors([]);
            setFilters(draft);
          }}
        >
          <Field label="Action (exact, or a prefix like user.login.*)" value={draft.action} onInput={set('action')} />
          <Select
            label="Outcome"
            value={draft.outcome}
            options={[
              { value: '', label: 'Any' },
              { value: 'success', label: 'Success' },
              { value: 'failure', label: 'Failure' },
            ]}
            onChange={set('outcome')}
          />
          <Field label="Actor id" value={draft.actorId} onInput={set('actorId')} />
          <Field label="Target id" value={draft.targetId} onInput={set('targetId')} />
          <Field label="IP address" value={draft.ip} onInput={set('ip')} />
          <Field label="From" type="datetime-local" value={draft.from} onInput={set('from')} />
          <Field label="To" type="datetime-local" value={draft.to} onInput={set('to')} />
          <div class="row">
            <button>Apply</button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setDraft(EMPTY);
                setCursors([]);
                setFilters(EMPTY);
              }}
            >
              Clear
            </button>
            <button type="button" class="secondary" disabled={exporting.busy} onClick={() => download('ndjson')}>
              Export NDJSON
            </button>
            <button type="button" class="secondary" disabled={exporting.busy} onClick={() => download('csv')}>
              Export CSV
            </button>
          </div>
        </form>
        <ErrorText error={exporting.error} />
        <div class="field check">
          <input id="audit-live" type="checkbox" checked={live} onChange={(e) => setLive((e.target as HTMLInputElement).checked)} />
          <label for="audit-live">Follow new entries live</label>
        </div>
        <ErrorText error={liveState.error} />
        <Off off={liveState.off} />
        <Notice text={liveState.following ? 'Following new entries.' : undefined} />
      </Section>
      <Section title="Entries">
        <ErrorText error={page.error} />
        <Table columns={['When', 'Action', 'Outcome', 'Actor', 'Target', 'IP']}>
          {entries.map((e) => (
            <Row key={e.id} entry={e} names={names} />
          ))}
          {page.data && !entries.length && (
            <tr>
              <td colSpan={6}>No entries match.</td>
            </tr>
          )}
        </Table>
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={!cursors.length} onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer
          </button>
          <span>
            {page.data?.paging && plural(page.data.paging.totalRowCount, 'entry', 'entries')}
            {entries.length > loaded.length && ` (+${entries.length - loaded.length} live)`}
          </span>
          <button type="button" disabled={!next} onClick={() => next && setCursors([...cursors, next])}>
            Older
          </button>
        </nav>
      </Section>
    </>
  );
}

// A user met in the entries: its name, and whether it is a user of the looked-at store (a link
// to it) or of the administrator's own (a SaaS administrator acting from the root).
interface Named {
  label: string;
  here: boolean;
}
type Names = Map<string, Named | null>;

// The names of the users the entries name, each asked once (GET /v1/users/:id): in the
// looked-at store, then, for a SaaS administrator looking elsewhere, in its own. null: in
// neither (deleted since, or of another store).
function useNames(session: Session, entries: Entry[]): Names {
  const [names, setNames] = useState<Names>(new Map());
  const ids = [...new Set(entries.flatMap((e) => [userIdOf(e.actor), e.target?.type === 'user' ? e.target.id : null]))].filter((id): id is string => !!id && !names.has(id));
  useEffect(() => {
    if (!ids.length) return;
    let live = true;
    const find = async (id: string, headers?: Record<string, string>) => {
      const { data } = await api.GET('/auth-api/v1/users/{id}', { params: { path: { id } }, headers });
      return data?.user;
    };
    void Promise.all(
      ids.map(async (id): Promise<[string, Named | null]> => {
        const here = await find(id).catch(() => undefined);
        if (here) return [id, { label: userLabel(here), here: true }];
        const mine = looksElsewhere(session) ? await find(id, own()).catch(() => undefined) : undefined;
        return [id, mine ? { label: userLabel(mine), here: false } : null];
      }),
    ).then((found) => live && setNames((known) => new Map([...known, ...found])));
    return () => {
      live = false;
    };
  }, [ids.join()]);
  return names;
}

function userIdOf(actor: Entry['actor']): string | null {
  const a = actor as { type?: string; id?: string | null };
  return a.type === 'user' || a.type === 'apiKey' ? (a.id ?? null) : null;
}

const shortId = (id: string) => id.slice(0, 8);

// A user as a name: a link to it in the Users screen when it is of the looked-at store.
function UserName({ id, names, session }: { id: string; names: Names; session: Session }) {
  const n = names.get(id);
  if (n === undefined) return <span title={id}>user {shortId(id)}…</span>;
  if (n === null) return <span title={id}>a user no longer here ({shortId(id)}…)</span>;
  if (!n.here) return <span title={id}>{n.label} ({session.store ? `store ${session.store}` : 'root'})</span>;
  return (
    <a href={`${BASE}/users?user=${id}`} title={id}>
      {n.label}
    </a>
  );
}

function Actor({ entry: e, names }: { entry: Entry; names: Names }) {
  const actor = e.actor as { type?: string; id?: string | null; roleId?: string | null };
  const s = currentSession()!;
  const role = actor.roleId ? ` (${actor.roleId})` : '';
  if (actor.type === 'user' && actor.id)
    return (
      <>
        <UserName id={actor.id} names={names} session={s} />
        {role}
      </>
    );
  if (actor.type === 'apiKey' && actor.id)
    return (
      <>
        an API key of <UserName id={actor.id} names={names} session={s} />
        {role}
      </>
    );
  if (actor.type === 'anonymous') return <>someone not signed in</>;
  return <>{[actor.type, actor.id && shortId(actor.id)].filter(Boolean).join(' ')}</>;
}

function Target({ entry: e, names }: { entry: Entry; names: Names }) {
  const t = e.target;
  const details = (e.details ?? {}) as Record<string, unknown>;
  if (!t) return <>—</>;
  if (t.type === 'user' && t.id) return <UserName id={t.id} names={names} session={currentSession()!} />;
  if (t.type === 'apiKey' && typeof details.name === 'string') return <>the API key {details.name}</>;
  if (t.type === 'store' && typeof details.codename === 'string') return <>store {details.codename}</>;
  if (t.type === 'permissionGrant' && typeof details.permission === 'string') return <>a grant of {details.permission}</>;
  if (t.type === 'session') return <span title={t.id ?? undefined}>a session</span>;
  return <span title={t.id ?? undefined}>{[t.type, t.id && `${shortId(t.id)}…`].filter(Boolean).join(' ')}</span>;
}

function Row({ entry: e, names }: { entry: Entry; names: Names }) {
  return (
    <tr class={e.outcome === 'failure' ? 'failure' : undefined}>
      <td>{when(e.at)}</td>
      <td>
        <code>{e.action}</code>
        {e.reason && <small> {e.reason}</small>}
      </td>
      <td>{e.outcome}</td>
      <td>
        <Actor entry={e} names={names} />
      </td>
      <td>
        <Target entry={e} names={names} />
      </td>
      <td>{e.ip ?? '—'}</td>
    </tr>
  );
}
