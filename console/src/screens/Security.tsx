import { useState } from 'preact/hooks';
import { api, must, own } from '../api/client';
import type { components } from '../api/schema';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Off, Scope, Section, useAction, useLoad, when } from '../ui';
import { PasskeySetup, TotpSetup } from './Enrol';

type Passkey = components['schemas']['PasskeyResponse'];
type Consent = { id: string; clientId: string; clientName: string | null; scopes: string[]; createdAt: string };

// The signed-in administrator's own second factors: an authenticator app, passkeys (listed,
// renamed, deleted), and the applications it let sign it in (the OpenID Connect provider's
// consents, revocable). They live in the store it signed in to, whichever store it looks at.
export default function Security({ session }: ScreenProps) {
  const factors = useLoad(() => must(api.GET('/auth-api/mfa', { headers: own() })), []);
  // 404 WebAuthnNotConfigured while passkeys are off: shown as off, with nothing to add.
  const passkeys = useLoad(async () => (await must(api.GET('/auth-api/passkeys', { headers: own() }))).passkeys, []);
  // 404 OidcProviderDisabled while the provider is off: shown as off.
  const consents = useLoad(async () => (await must(api.GET('/auth-api/oauth/consents', { headers: own() }))).consents as Consent[], []);
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
      <Section title="Applications you let sign you in">
        <Off off={consents.off} />
        <ErrorText error={consents.error} />
        {consents.data && (
          <ul class="list" aria-label="Applications you let sign you in">
            {consents.data.map((c) => (
              <ConsentItem key={c.id} consent={c} onChanged={consents.reload} />
            ))}
            {!consents.data.length && <li>No application yet.</li>}
          </ul>
        )}
      </Section>
    </>
  );
}

function ConsentItem({ consent: c, onChanged }: { consent: Consent; onChanged: () => void }) {
  const action = useAction();
  const name = c.clientName ?? c.clientId;
  return (
    <li>
      <div class="row">
        <span>
          <strong>{name}</strong> — {c.scopes.join(', ')} — since {when(c.createdAt)}
        </span>
        <button
          type="button"
          class="danger"
          aria-label={`Revoke the access of ${name}`}
          disabled={action.busy}
          onClick={() =>
            confirm(`Revoke the access of ${name}? Its tokens stop working, and it asks you again next time.`) &&
            action.run(async () => {
              await must(api.DELETE('/auth-api/oauth/consents/{id}', { params: { path: { id: c.id } }, headers: own() }));
              onChanged();
            })
          }
        >
          Revoke
        </button>
      </div>
      <ErrorText error={action.error} />
    </li>
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
