import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { AUDIT_ACTIONS } from '../api/audit-actions';
import type { components } from '../api/schema';
import { storeName } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Off, Pager, plural, Scope, Section, Select, Table, useAction, useLoad, when } from '../ui';

type Webhook = components['schemas']['WebhookResponse'];
type WithSecret = components['schemas']['WebhookWithSecretResponse'];
type Delivery = components['schemas']['DeliveryResponse'];
type Status = Delivery['status'];
const PAGE = 20;

// What an endpoint may subscribe to (webhook-topics.ts): the API events, an audit action as
// `audit:<action>`, or `*` for every one of them.
const ALL = '*';
const API_EVENTS = ['user-created', 'user-updated', 'user-deleted', 'store-created', 'apikey-created', 'apikey-deleted', 'notification-created', 'session-ended'];
const AUDIT_TOPICS = AUDIT_ACTIONS.map((a) => `audit:${a}`);

// Why the service disabled an endpoint (`disabledReason`), in words.
const WHY: Record<string, string> = {
  gone: 'it answered 410 Gone',
  failing: 'its deliveries kept failing',
};
const why = (reason: string) => WHY[reason] ?? reason;

const stateOf = (w: Webhook) => (w.enabled ? 'enabled' : w.disabledReason ? `disabled by the service: ${why(w.disabledReason)}` : 'disabled');
const topicsOf = (w: { topics: string[] }) => (w.topics.includes(ALL) ? 'every event (*)' : w.topics.join(', '));

// The looked-at store's webhook endpoints: add one (its signing secret shown once), list them;
// one opened: its topics and description changed, enabled or disabled, its secret rotated
// (shown once), a test sent, deleted; and its delivery log, each delivery tried again on demand.
export default function Webhooks({ session }: ScreenProps) {
  const where = storeName(session);
  const [page, setPage] = useState(1);
  const list = useLoad(() => must(api.GET('/auth-api/v1/webhooks', { params: { query: { pageNumber: page, pageRowCount: PAGE } } })), [page]);
  const [selected, setSelected] = useState<string>();
  const [secret, setSecret] = useState<{ webhook: WithSecret; how: 'created' | 'rotated' }>();
  const [notice, setNotice] = useState<string>();
  // Bumped by a test sent: the delivery log shows it. An attempt may disable the endpoint (an
  // answer 410), so the list is read again too.
  const [sent, setSent] = useState(0);
  const attempted = () => {
    setSent((n) => n + 1);
    list.reload();
  };
  const hooks = list.data?.webhooks ?? [];
  const open = hooks.find((w) => w.id === selected);
  if (list.off)
    return (
      <>
        <h1>Webhooks</h1>
        <Scope session={session} />
        <Off off={list.off} />
      </>
    );
  return (
    <>
      <h1>Webhooks</h1>
      <Scope session={session} />
      <CreateWebhook
        where={where}
        secret={secret?.how === 'created' ? secret.webhook : undefined}
        onSecretClosed={() => setSecret(undefined)}
        onCreated={(webhook) => {
          setSecret({ webhook, how: 'created' });
          setNotice(undefined);
          setSelected(undefined);
          list.reload();
        }}
      />
      <Section title={`Endpoints of ${where}`}>
        <ErrorText error={list.error} />
        <Notice text={notice} />
        <div class="endpoints">
          <Table columns={['URL', 'Topics', 'Description', 'State']} actions caption="Endpoints">
            {hooks.map((w) => (
              <tr key={w.id} aria-selected={w.id === selected}>
                <td class="url">
                  <code>{w.url}</code>
                </td>
                <td>{topicsOf(w)}</td>
                <td>{w.description || '—'}</td>
                <td>{stateOf(w)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    aria-expanded={w.id === selected}
                    aria-label={`${w.id === selected ? 'Close' : 'Open'} the endpoint ${w.url}`}
                    onClick={() => {
                      setNotice(undefined);
                      setSelected(w.id === selected ? undefined : w.id);
                    }}
                  >
                    {w.id === selected ? 'Close' : 'Open'}
                  </button>
                </td>
              </tr>
            ))}
            {list.data && !hooks.length && (
              <tr>
                <td colSpan={5}>No endpoints.</td>
              </tr>
            )}
          </Table>
        </div>
        {list.data?.paging && <Pager page={page} pages={list.data.paging.pageCount} total={list.data.paging.totalRowCount} onPage={setPage} />}
      </Section>
      {open && (
        <>
          <EditWebhook
            key={open.id}
            webhook={open}
            where={where}
            onChanged={list.reload}
            rotated={secret?.how === 'rotated' && secret.webhook.id === open.id ? secret.webhook : undefined}
            onRotated={(webhook) => setSecret({ webhook, how: 'rotated' })}
            onSecretClosed={() => setSecret(undefined)}
            onTested={attempted}
            onDeleted={() => {
              if (secret?.webhook.id === open.id) setSecret(undefined);
              setSelected(undefined);
              setNotice(`The endpoint ${open.url} was deleted from ${where}, with its delivery log.`);
              list.reload();
            }}
          />
          <Deliveries key={`log:${open.id}`} webhook={open} sent={sent} onRetried={list.reload} />
        </>
      )}
    </>
  );
}

// The signing secret of a created or rotated endpoint: in this answer only, so shown here once,
// with a copy button; closing it (or leaving the screen) forgets it.
function SecretOnce({ webhook, how, where, onClose }: { webhook: WithSecret; how: 'created' | 'rotated'; where: string; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status" aria-label="Signing secret">
      <p>
        {how === 'created' ? `The endpoint ${webhook.url} was added to ${where}.` : `The endpoint ${webhook.url} has a new signing secret; the previous one keeps signing beside it for a while.`}{' '}
        <strong>Copy its signing secret now: you will not see it again.</strong>
      </p>
      <code data-testid="webhook-secret">{webhook.secret}</code>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(webhook.secret).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
      <button type="button" class="secondary" onClick={onClose}>
        I have copied it
      </button>
    </div>
  );
}

function CreateWebhook({ where, secret, onCreated, onSecretClosed }: { where: string; secret?: WithSecret; onCreated: (w: WithSecret) => void; onSecretClosed: () => void }) {
  const [url, setUrl] = useState('');
  const [topics, setTopics] = useState<string[]>([]);
  const [description, setDescription] = useState('');
  const action = useAction();
  return (
    <Section title="Add an endpoint">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!topics.length) return action.setError('Pick at least one topic.');
          void action.run(async () => {
            const { webhook } = await must(api.POST('/auth-api/v1/webhooks', { body: { url: url.trim(), topics, enabled: true, ...(description.trim() && { description: description.trim() }) } }));
            setUrl('');
            setTopics([]);
            setDescription('');
            onCreated(webhook);
          });
        }}
      >
        <Field label="Endpoint URL" type="url" value={url} onInput={setUrl} required autocomplete="off" hint={`Where ${where}'s events are sent, signed (Standard Webhooks).`} />
        <Field label="Description" value={description} onInput={setDescription} autocomplete="off" />
        <Topics legend="Topics" value={topics} onChange={setTopics} />
        <ErrorText error={action.error} />
        <button disabled={action.busy}>Add the endpoint</button>
      </form>
      {secret && <SecretOnce webhook={secret} how="created" where={where} onClose={onSecretClosed} />}
    </Section>
  );
}

// The topics picked: every event (`*`), or API events and audit entries one by one. A topic the
// endpoint holds that the console does not list (an extension's audit action) stays offered.
function Topics({ legend, value, onChange }: { legend: string; value: string[]; onChange: (topics: string[]) => void }) {
  const all = value.includes(ALL);
  const known = new Set([...API_EVENTS, ...AUDIT_TOPICS]);
  const others = value.filter((t) => t !== ALL && !known.has(t));
  const audits = value.filter((t) => t.startsWith('audit:')).length;
  const toggle = (topic: string, on: boolean) => onChange(on ? [...value.filter((t) => t !== topic), topic] : value.filter((t) => t !== topic));
  const box = (topic: string) => (
    <li key={topic}>
      <label class="check">
        <input type="checkbox" checked={value.includes(topic)} disabled={all} onChange={(e) => toggle(topic, (e.target as HTMLInputElement).checked)} /> <code>{topic}</code>
      </label>
    </li>
  );
  return (
    <fieldset class="topics">
      <legend>{legend}</legend>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(e) => onChange((e.target as HTMLInputElement).checked ? [ALL] : [])} /> Every event (<code>*</code>)
      </label>
      <h3>API events</h3>
      <ul class="list perms">{[...API_EVENTS, ...others].map(box)}</ul>
      <details>
        <summary>Audit entries ({audits ? `${audits} picked` : 'none picked'})</summary>
        <ul class="list perms">{AUDIT_TOPICS.map(box)}</ul>
      </details>
    </fieldset>
  );
}

function EditWebhook({
  webhook: w,
  where,
  onChanged,
  rotated,
  onRotated,
  onSecretClosed,
  onTested,
  onDeleted,
}: {
  webhook: Webhook;
  where: string;
  onChanged: () => void;
  rotated?: WithSecret;
  onRotated: (w: WithSecret) => void;
  onSecretClosed: () => void;
  onTested: () => void;
  onDeleted: () => void;
}) {
  const [topics, setTopics] = useState(w.topics);
  const [description, setDescription] = useState(w.description ?? '');
  const [notice, setNotice] = useState<string>();
  const [tested, setTested] = useState<Delivery>();
  const action = useAction();
  const path = { params: { path: { id: w.id } } };
  const run = (what: () => Promise<unknown>) => {
    setNotice(undefined);
    setTested(undefined);
    return action.run(what);
  };
  return (
    <Section title={`Endpoint ${w.url}`}>
      <p>
        {stateOf(w)}; created {when(w.createdAt)}, changed {when(w.updatedAt)}.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!topics.length) return action.setError('Pick at least one topic.');
          void run(async () => {
            await must(api.PATCH('/auth-api/v1/webhooks/{id}', { ...path, body: { topics, description: (description.trim() || null) as never } }));
            setNotice(`Saved in ${where}.`);
            onChanged();
          });
        }}
      >
        <Field label="Description" value={description} onInput={setDescription} autocomplete="off" />
        <Topics legend="Topics of this endpoint" value={topics} onChange={setTopics} />
        <div class="row start">
          <button disabled={action.busy}>Save</button>
        </div>
      </form>
      <ErrorText error={action.error} />
      <Notice text={notice} />
      <div class="row start actions">
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() =>
            run(async () => {
              await must(api.PATCH('/auth-api/v1/webhooks/{id}', { ...path, body: { enabled: !w.enabled } }));
              setNotice(w.enabled ? 'The endpoint was disabled: its events are no longer sent to it.' : 'The endpoint was enabled.');
              onChanged();
            })
          }
        >
          {w.enabled ? 'Disable' : 'Enable'}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() =>
            run(async () => {
              const { delivery } = await must(api.POST('/auth-api/v1/webhooks/{id}/test', path));
              setTested(delivery);
              onTested();
            })
          }
        >
          Send a test
        </button>
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() =>
            confirm(`Give ${w.url} a new signing secret? The current one keeps signing beside it for a while.`) &&
            run(async () => {
              onRotated((await must(api.POST('/auth-api/v1/webhooks/{id}/rotate-secret', path))).webhook);
              onChanged();
            })
          }
        >
          Rotate the secret
        </button>
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() =>
            confirm(`Delete the endpoint ${w.url} and its delivery log from ${where}? Nothing more is sent to it.`) &&
            run(async () => {
              await must(api.DELETE('/auth-api/v1/webhooks/{id}', path));
              onDeleted();
            })
          }
        >
          Delete the endpoint
        </button>
      </div>
      {rotated && <SecretOnce webhook={rotated} how="rotated" where={where} onClose={onSecretClosed} />}
      {tested && (
        <div class="tested" role="status" aria-label="Test delivery">
          <p>
            Test sent: <strong>{tested.status}</strong>, {answerOf(tested)}.
          </p>
          {(tested.responseBody || tested.error) && <pre>{tested.responseBody || tested.error}</pre>}
        </div>
      )}
    </Section>
  );
}

// What a delivery's last attempt got, in words.
function answerOf(d: Delivery): string {
  if (d.responseStatus !== null) return `answered ${d.responseStatus}${d.durationMs !== null ? ` in ${d.durationMs} ms` : ''}`;
  if (d.error) return 'no answer';
  return 'not attempted yet';
}

// The endpoint's delivery log: newest first, paged, filtered by status; a delivery's answer (or
// why there was none) on demand; each one tried again at once with Retry.
function Deliveries({ webhook: w, sent, onRetried }: { webhook: Webhook; sent: number; onRetried: () => void }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<'' | Status>('');
  const [shown, setShown] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const log = useLoad(
    () => must(api.GET('/auth-api/v1/webhooks/{id}/deliveries', { params: { path: { id: w.id }, query: { pageNumber: page, pageRowCount: PAGE, ...(status && { status }) } } })),
    [w.id, page, status, w.updatedAt, sent],
  );
  const rows = log.data?.deliveries ?? [];
  return (
    <Section title={`Deliveries to ${w.url}`}>
      <div class="row">
        <Select
          label="Status"
          value={status}
          options={[
            { value: '', label: 'Any' },
            { value: 'pending', label: 'Pending (will be tried again)' },
            { value: 'delivered', label: 'Delivered' },
            { value: 'failed', label: 'Failed' },
          ]}
          onChange={(v) => {
            setPage(1);
            setStatus(v as '' | Status);
          }}
        />
        <button type="button" class="secondary" disabled={log.loading} onClick={log.reload}>
          Refresh
        </button>
      </div>
      <ErrorText error={log.error ?? action.error} />
      <Notice text={notice} />
      <div class="deliveries">
        <Table columns={['Topic', 'Status', 'Attempts', 'Answer (time)', 'Last / next attempt']} actions caption="Deliveries">
          {rows.flatMap((d) => [
            <tr key={d.id} class={d.status === 'delivered' ? undefined : `delivery-${d.status}`}>
              <td>
                <code>{d.topic}</code>
              </td>
              <td>{d.status}</td>
              <td>{d.attempts}</td>
              <td>
                {d.responseStatus ?? (d.error ? 'none' : '—')}
                {d.durationMs !== null && ` (${d.durationMs} ms)`}
              </td>
              <td>
                {when(d.lastAttemptAt)}
                {d.nextAttemptAt && (
                  <>
                    <br />
                    <small>next {when(d.nextAttemptAt)}</small>
                  </>
                )}
              </td>
              <td>
                <span class="buttons">
                  <button
                    type="button"
                    class="secondary"
                    aria-expanded={shown === d.id}
                    aria-label={`${shown === d.id ? 'Hide' : 'Show'} the ${d.error && d.responseStatus === null ? 'error' : 'answer'}`}
                    onClick={() => setShown(shown === d.id ? undefined : d.id)}
                  >
                    {shown === d.id ? 'Hide' : 'Show'}
                  </button>
                  <button
                    type="button"
                    disabled={action.busy}
                    aria-label={`Retry the ${d.topic} delivery`}
                    onClick={() => {
                      setNotice(undefined);
                      void action.run(async () => {
                        const { delivery } = await must(
                          api.POST('/auth-api/v1/webhooks/{id}/deliveries/{deliveryId}/retry', { params: { path: { id: w.id, deliveryId: d.id } } }),
                        );
                        setNotice(`Tried again: ${delivery.status}, ${answerOf(delivery)}.`);
                        log.reload();
                        onRetried();
                      });
                    }}
                  >
                    Retry
                  </button>
                </span>
              </td>
            </tr>,
            shown === d.id && (
              <tr key={`${d.id}:answer`}>
                <td colSpan={6}>
                  <DeliveryDetail delivery={d} />
                </td>
              </tr>
            ),
          ])}
          {log.data && !rows.length && (
            <tr>
              <td colSpan={6}>{status ? `No ${status} deliveries.` : 'No deliveries yet.'}</td>
            </tr>
          )}
        </Table>
      </div>
      {log.data?.paging && (
        <>
          <p class="count">{plural(log.data.paging.totalRowCount, 'delivery', 'deliveries')}, newest first.</p>
          <Pager page={page} pages={log.data.paging.pageCount} onPage={setPage} />
        </>
      )}
    </Section>
  );
}

function DeliveryDetail({ delivery: d }: { delivery: Delivery }) {
  return (
    <div class="delivery" aria-label={`The ${d.topic} delivery`} role="group">
      <p>
        Event <code>{d.eventId}</code>, created {when(d.createdAt)}.{' '}
        {d.error ? `The last attempt had no answer: ${d.error}.` : d.responseStatus !== null ? `The last attempt was answered ${d.responseStatus}.` : 'Not attempted yet.'}
      </p>
      {d.responseBody !== null && (
        <>
          <p>The answer's first kilobyte:</p>
          <pre>{d.responseBody || '(empty)'}</pre>
        </>
      )}
    </div>
  );
}
