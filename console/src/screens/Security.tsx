import { useState } from 'preact/hooks';
import { api, must, own } from '../api/client';
import type { components } from '../api/schema';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Off, Scope, Section, useAction, useLoad, when } from '../ui';
import { PasskeySetup, TotpSetup } from './Enrol';

type Passkey = components['schemas']['PasskeyResponse'];

// The signed-in administrator's own second factors: an authenticator app, passkeys (listed,
// renamed, deleted). They live in the store it signed in to, whichever store it looks at.
export default function Security({ session }: ScreenProps) {
  const factors = useLoad(() => must(api.GET('/auth-api/mfa', { headers: own() })), []);
  // 404 WebAuthnNotConfigured while passkeys are off: shown as off, with nothing to add.
  const passkeys = useLoad(async () => (await must(api.GET('/auth-api/passkeys', { headers: own() }))).passkeys, []);
  const f = factors.data;
  const changed = () => {
    factors.reload();
    passkeys.reload();
  };
  return (
    <>
      <h1>My security</h1>
      <Scope session={session} own />
      <Section title="Second factors">
        <ErrorText error={factors.error} />
        {f && (
          <p>
            Authenticator app: {f.totp ? 'on' : 'off'}. Passkeys: {f.passkeys}. Recovery codes left: {f.recoveryCodesLeft}.
          </p>
        )}
      </Section>
      {f && !f.totp && (
        <Section title="Authenticator app">
          <TotpSetup onDone={factors.reload} />
        </Section>
      )}
      <Section title="Passkeys">
        <Off off={passkeys.off} />
        <ErrorText error={passkeys.error} />
        {passkeys.data && (
          <>
            <ul class="list" aria-label="Your passkeys">
              {passkeys.data.map((p) => (
                <PasskeyItem key={p.id} passkey={p} onChanged={changed} />
              ))}
              {!passkeys.data.length && <li>No passkey yet.</li>}
            </ul>
            <PasskeySetup onDone={changed} />
          </>
        )}
      </Section>
    </>
  );
}

function PasskeyItem({ passkey: p, onChanged }: { passkey: Passkey; onChanged: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(p.name);
  const action = useAction();
  const path = { params: { path: { id: p.id } }, headers: own() };
  return (
    <li>
      {renaming ? (
        <form
          class="row"
          aria-label={`Rename the passkey ${p.name}`}
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              await must(api.PATCH('/auth-api/passkeys/{id}', { ...path, body: { name: name.trim() } }));
              setRenaming(false);
              onChanged();
            });
          }}
        >
          <Field label="New name" value={name} onInput={setName} required />
          <span class="row start">
            <button disabled={action.busy}>Save</button>
            <button type="button" class="secondary" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </span>
        </form>
      ) : (
        <div class="row">
          <span>
            <strong>{p.name}</strong> — added {when(p.createdAt)}, last used {when(p.lastUsedAt)}
            {p.backedUp && ' — synced to your other devices'}
          </span>
          <span class="row start">
            <button type="button" class="secondary" aria-label={`Rename the passkey ${p.name}`} onClick={() => setRenaming(true)}>
              Rename
            </button>
            <button
              type="button"
              class="danger"
              aria-label={`Delete the passkey ${p.name}`}
              disabled={action.busy}
              onClick={() =>
                confirm(`Delete the passkey ${p.name}? It no longer signs you in.`) &&
                action.run(async () => {
                  await must(api.DELETE('/auth-api/passkeys/{id}', path));
                  onChanged();
                })
              }
            >
              Delete
            </button>
          </span>
        </div>
      )}
      <ErrorText error={action.error} />
    </li>
  );
}
