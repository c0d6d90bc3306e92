import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import type { components } from '../api/schema';
import { looksElsewhere, storeName } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Scope, Section, Table, useAction, useLoad, when } from '../ui';

type Created = components['schemas']['CreatedApiKeyResponse'];

// API keys of the looked-at store: create (the key is shown this once), list, delete. A key acts
// for its creator, a user of its store: a SaaS administrator looking at another store lists and
// deletes its keys but makes none there (the API answers 403 ApiKeyOutsideOwnStore).
export default function ApiKeys({ session }: ScreenProps) {
  const where = storeName(session);
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
      <Scope session={session} />
      <Section title="Create a key">
        {looksElsewhere(session) ? (
          <p>
            A key acts for the user who makes it, and you are not a user of {where}: its keys are made by its own owner or administrators. Here you may see and delete
            them.
          </p>
        ) : (
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
        )}
        {created && (
          <div class="secret" role="status">
            <p>
              The key <strong>{created.name}</strong> of {where}, acting for you as {created.roles.join(', ')}: copy it now, it is not shown again.
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
      <Section title={`Keys of ${where}`}>
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
                      setNotice(`The key ${k.name} was deleted from ${where}.`);
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
