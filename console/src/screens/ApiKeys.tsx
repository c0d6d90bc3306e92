import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import type { components } from '../api/schema';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Section, Table, useAction, useLoad, when } from '../ui';

type Created = components['schemas']['CreatedApiKeyResponse'];

// API keys of the looked-at store: create (the key is shown this once), list, delete.
export default function ApiKeys(_: ScreenProps) {
  const list = useLoad(() => must(api.GET('/auth-api/v1/apikeys')), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Created>();
  const [copied, setCopied] = useState(false);
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const keys = list.data?.apiKeys ?? [];
  return (
    <>
      <h1>API keys</h1>
      <Section title="Create a key">
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            setCopied(false);
            setNotice(undefined);
            void action.run(async () => {
              setCreated((await must(api.POST('/auth-api/v1/apikeys', { body: { name: name.trim() } }))).apiKey);
              setName('');
              list.reload();
            });
          }}
        >
          <Field label="Key name" value={name} onInput={setName} required />
          <button disabled={action.busy}>Create</button>
        </form>
        {created && (
          <div class="secret" role="status">
            <p>
              The key <strong>{created.name}</strong>: copy it now, it is not shown again.
            </p>
            <code data-testid="new-api-key">{created.key}</code>
            <button
              type="button"
              onClick={() =>
                navigator.clipboard.writeText(created.key).then(
                  () => setCopied(true),
                  () => setCopied(false),
                )
              }
            >
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
        )}
      </Section>
      <Section title="Keys">
        <ErrorText error={list.error ?? action.error} />
        <Notice text={notice} />
        <Table columns={['Name', 'Starts with', 'Created', 'Last used']} actions>
          {keys.map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{when(k.createdAt)}</td>
              <td>{when(k.lastUsedAt)}</td>
              <td>
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete the key ${k.name}`}
                  disabled={action.busy}
                  onClick={() =>
                    confirm(`Delete the key ${k.name}? Whatever uses it stops working.`) &&
                    action.run(async () => {
                      await must(api.DELETE('/auth-api/v1/apikeys/{id}', { params: { path: { id: k.id } } }));
                      if (created?.id === k.id) setCreated(undefined);
                      setNotice(`The key ${k.name} was deleted.`);
                      list.reload();
                    })
                  }
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {list.data && !keys.length && (
            <tr>
              <td colSpan={5}>No keys.</td>
            </tr>
          )}
        </Table>
      </Section>
    </>
  );
}
