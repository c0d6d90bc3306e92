import { useEffect, useState } from 'preact/hooks';
import { api, must, sentenceOf, STORE_HEADER } from '../api/client';
import { AUDIT_ACTIONS } from '../api/audit-actions';
import type { components } from '../api/schema';
import { session as currentSession } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Section, Select, Table, useAction, useLoad, when } from '../ui';

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
function useLive(on: boolean, onEntry: (e: Entry) => void): { error?: string; following: boolean } {
  const [error, setError] = useState<string>();
  const [following, setFollowing] = useState(false);
  useEffect(() => {
    if (!on) return;
    const s = currentSession()!;
    const query = new URLSearchParams({ topics: AUDIT_ACTIONS.join(','), access_token: s.login.accessToken, ...(s.target && { _store: s.target }) });
    const source = new EventSource(`/events/${LIVE_SUBSCRIPTION}/stream?${query}`);
    setError(undefined);
    source.addEventListener('subscribed', () => setFollowing(true));
    source.addEventListener('event', (m) => {
      const data = (JSON.parse((m as MessageEvent).data) as { data: Entry | { entry: Entry } }).data;
      onEntry('entry' in data ? data.entry : data);
    });
    source.addEventListener('error', (m) => {
      const text = (m as MessageEvent).data;
      if (text) setError(JSON.parse(text).detail ?? 'The live stream ended.');
      else if (source.readyState === EventSource.CLOSED) setError('The live stream could not be opened.');
      setFollowing(false);
    });
    return () => {
      source.close();
      setFollowing(false);
    };
  }, [on]);
  return { error, following };
}

// The query the audit routes take: the filters set, instants in ISO form.
function queryOf(f: Filters): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) if (v) q[k] = k === 'from' || k === 'to' ? new Date(v).toISOString() : v.trim();
  return q;
}

// The looked-at store's audit log: the API's filters, keyset pages (nextCursor → after=),
// exports.
export default function AuditLog(_: ScreenProps) {
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

  const download = (format: 'ndjson' | 'csv') =>
    exporting.run(async () => {
      // A fetch rather than a link: the export needs the Bearer header and the store header.
      const s = currentSession()!;
      const res = await fetch(`/auth-api/v1/auditlogs/export?${new URLSearchParams({ ...queryOf(filters), format })}`, {
        headers: { authorization: `Bearer ${s.login.accessToken}`, ...(s.target && { [STORE_HEADER]: s.target }) },
      });
      if (!res.ok) throw new Error(sentenceOf(await res.json().catch(() => undefined), res.status));
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = `audit-log.${format}`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });

  return (
    <>
      <h1>Audit log</h1>
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
        <Notice text={liveState.following ? 'Following new entries.' : undefined} />
      </Section>
      <Section title="Entries">
        <ErrorText error={page.error} />
        <Table columns={['When', 'Action', 'Outcome', 'Actor', 'Target', 'IP']}>
          {entries.map((e) => (
            <Row key={e.id} entry={e} />
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
            {page.data?.paging && `${page.data.paging.totalRowCount} ${page.data.paging.totalRowCount === 1 ? 'entry' : 'entries'}`}
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

function Row({ entry: e }: { entry: Entry }) {
  const actor = e.actor as { type?: string; id?: string | null; roleId?: string | null };
  return (
    <tr class={e.outcome === 'failure' ? 'failure' : undefined}>
      <td>{when(e.at)}</td>
      <td>
        <code>{e.action}</code>
        {e.reason && <small> {e.reason}</small>}
      </td>
      <td>{e.outcome}</td>
      <td>{[actor.type, actor.id].filter(Boolean).join(' ')}</td>
      <td>{e.target ? [e.target.type, e.target.id].filter(Boolean).join(' ') : '—'}</td>
      <td>{e.ip ?? '—'}</td>
    </tr>
  );
}
