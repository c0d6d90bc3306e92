import { useEffect, useRef, useState } from 'preact/hooks';
import { api, must } from '../api/client';
import type { components } from '../api/schema';
import { storeName, type Session } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Off, Pager, Scope, Section, Select, Table, useAction, useLoad, when } from '../ui';

type Client = components['schemas']['OAuthClientResponse'];
type WithSecret = components['schemas']['OAuthClientWithSecretResponse'];
type GrantType = Client['grantTypes'][number];
type ClientScope = Client['scopes'][number];
type Method = Client['tokenEndpointAuthMethod'];
const PAGE = 20;

// What a client may be registered with (docs/oidc.md), in the API's order.
const GRANTS: { value: GrantType; label: string }[] = [
  { value: 'authorization_code', label: 'users sign in through the browser' },
  { value: 'refresh_token', label: 'renews tokens; needs authorization_code' },
  { value: 'client_credentials', label: 'a backend acting for itself; confidential clients only' },
];
const SCOPES: ClientScope[] = ['openid', 'offline_access', 'email', 'phone', 'profile', 'roles'];
const METHODS: { value: Method; label: string }[] = [
  { value: 'client_secret_basic', label: 'Confidential: client secret, HTTP Basic (client_secret_basic)' },
  { value: 'client_secret_post', label: 'Confidential: client secret in the form (client_secret_post)' },
  { value: 'private_key_jwt', label: 'Confidential: signed assertion, your public keys (private_key_jwt)' },
  { value: 'none', label: 'Public: a browser or native app with PKCE, no secret (none)' },
];

const typeOf = (c: { tokenEndpointAuthMethod: Method }) => (c.tokenEndpointAuthMethod === 'none' ? 'public' : 'confidential');
// Only the secret methods have a secret the service issues (and so one to rotate).
const hasSecret = (c: { tokenEndpointAuthMethod: Method }) => c.tokenEndpointAuthMethod === 'client_secret_basic' || c.tokenEndpointAuthMethod === 'client_secret_post';
// One URI a line in the text areas; blank lines dropped.
const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

// The issuer of the looked-at store: the discovery document's own `issuer` (it honours
// PUBLIC_URL), else the page's origin with the store's codename (`root` for the root store).
function useIssuer(session: Session): string {
  const codename = session.target || 'root';
  const guessed = `${location.origin}/auth-api/oidc/${encodeURIComponent(codename)}`;
  const [issuer, setIssuer] = useState(guessed);
  useEffect(() => {
    let live = true;
    fetch(`/auth-api/oidc/${encodeURIComponent(codename)}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } })
      .then((res) => (res.ok ? (res.json() as Promise<{ issuer?: unknown }>) : undefined))
      .then((doc) => live && typeof doc?.issuer === 'string' && setIssuer(doc.issuer))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [codename]);
  return issuer;
}

// A copy button that says when it copied.
function Copy({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      aria-label={label}
      onClick={() =>
        navigator.clipboard.writeText(text).then(
          () => setCopied(true),
          () => setCopied(false),
        )
      }
    >
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}

// The looked-at store's OAuth clients of its OpenID Connect provider: its issuer and discovery
// URL; register one (its secret shown once); list them; one opened: its name, URIs, grant types,
// scopes and first-party flag changed, its secret rotated (shown once), deleted.
export default function Applications({ session }: ScreenProps) {
  const where = storeName(session);
  const [page, setPage] = useState(1);
  const list = useLoad(() => must(api.GET('/auth-api/v1/oauthclients', { params: { query: { pageNumber: page, pageRowCount: PAGE } } })), [page]);
  const [selected, setSelected] = useState<string>();
  // A secret lives in this state only: closing it, or leaving the screen, forgets it.
  const [secret, setSecret] = useState<{ client: WithSecret; how: 'created' | 'rotated' }>();
  const [notice, setNotice] = useState<string>();
  const clients = list.data?.oauthClients ?? [];
  const open = clients.find((c) => c.id === selected);
  if (list.off)
    return (
      <>
        <h1>Applications</h1>
        <Scope session={session} />
        <Off off={list.off} />
      </>
    );
  return (
    <>
      <h1>Applications</h1>
      <Scope session={session} />
      <Provider session={session} />
      <CreateClient
        where={where}
        created={secret?.how === 'created' ? secret.client : undefined}
        onClosed={() => setSecret(undefined)}
        onCreated={(client) => {
          setSecret({ client, how: 'created' });
          setNotice(undefined);
          setSelected(undefined);
          list.reload();
        }}
      />
      <Section title={`Applications of ${where}`}>
        <ErrorText error={list.error} />
        <Notice text={notice} />
        <div class="apps">
          <Table columns={['Name', 'Client ID', 'Type', 'Grant types', 'Redirect URIs', 'First party']} actions caption="Applications">
            {clients.map((c) => (
              <tr key={c.id} aria-selected={c.id === selected}>
                <td>{c.name}</td>
                <td>
                  <code>{c.clientId}</code>
                </td>
                <td>{typeOf(c)}</td>
                <td>{c.grantTypes.join('\n')}</td>
                <td>{c.redirectUris.length ? c.redirectUris.join('\n') : '—'}</td>
                <td>{c.firstParty ? 'yes' : 'no'}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    aria-expanded={c.id === selected}
                    aria-label={`${c.id === selected ? 'Close' : 'Open'} the application ${c.name}`}
                    onClick={() => {
                      setNotice(undefined);
                      setSelected(c.id === selected ? undefined : c.id);
                    }}
                  >
                    {c.id === selected ? 'Close' : 'Open'}
                  </button>
                </td>
              </tr>
            ))}
            {list.data && !clients.length && (
              <tr>
                <td colSpan={7}>No applications.</td>
              </tr>
            )}
          </Table>
        </div>
        {list.data?.paging && <Pager page={page} pages={list.data.paging.pageCount} total={list.data.paging.totalRowCount} onPage={setPage} />}
      </Section>
      {open && (
        <EditClient
          key={open.id}
          client={open}
          where={where}
          onChanged={list.reload}
          rotated={secret?.how === 'rotated' && secret.client.id === open.id ? secret.client : undefined}
          onRotated={(client) => setSecret({ client, how: 'rotated' })}
          onClosed={() => setSecret(undefined)}
          onDeleted={() => {
            if (secret?.client.id === open.id) setSecret(undefined);
            setSelected(undefined);
            setNotice(`The application ${open.name} (${open.clientId}) was deleted from ${where}: it can no longer sign anyone in.`);
            list.reload();
          }}
        />
      )}
    </>
  );
}

// Where applications find the store's provider.
function Provider({ session }: { session: Session }) {
  const issuer = useIssuer(session);
  const discovery = `${issuer}/.well-known/openid-configuration`;
  return (
    <Section title="OpenID Connect provider">
      <p>Applications of {storeName(session)} sign their users in here (openid-client and other OpenID Connect libraries find the rest in the discovery document).</p>
      <dl class="issuer">
        <dt>Issuer</dt>
        <dd>
          <code data-testid="oidc-issuer">{issuer}</code> <Copy text={issuer} label="Copy the issuer" />
        </dd>
        <dt>Discovery URL</dt>
        <dd>
          <code data-testid="oidc-discovery">{discovery}</code> <Copy text={discovery} label="Copy the discovery URL" />
        </dd>
      </dl>
    </Section>
  );
}

// The client secret of a registered or rotated confidential client: in this answer only, so
// shown here once, with a copy button.
function SecretOnce({ client, how, where, onClose }: { client: WithSecret; how: 'created' | 'rotated'; where: string; onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.scrollIntoView?.({ block: 'nearest' }), []);
  return (
    <div class="secret" role="status" aria-label="Client secret" ref={ref}>
      <p>
        {how === 'created'
          ? `The application ${client.name} was registered in ${where}, client ID ${client.clientId}.`
          : `The application ${client.name} has a new client secret; the previous one is no longer accepted.`}{' '}
        <strong>Copy its client secret now: you will not see it again.</strong>
      </p>
      <code data-testid="client-secret">{client.clientSecret}</code>
      <Copy text={client.clientSecret ?? ''} label="Copy the client secret" />
      <button type="button" class="secondary" onClick={onClose}>
        I have copied it
      </button>
    </div>
  );
}

// A public client has no secret: said once, in place of one.
function Registered({ client, where, onClose }: { client: WithSecret; where: string; onClose: () => void }) {
  return (
    <div class="secret" role="status" aria-label="Registered">
      <p>
        The application {client.name} was registered in {where}, client ID <code>{client.clientId}</code>.{' '}
        {client.tokenEndpointAuthMethod === 'none' ? 'It is a public client: it has no secret, and proves itself with PKCE.' : 'It signs its requests with its own keys: it has no secret.'}
      </p>
      <button type="button" class="secondary" onClick={onClose}>
        Close
      </button>
    </div>
  );
}

function TextArea(props: { label: string; value: string; onInput: (value: string) => void; hint?: string; rows?: number }) {
  const id = useRef(`t${Math.random().toString(36).slice(2, 8)}`).current;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows ?? 2}
        value={props.value}
        spellcheck={false}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onInput((e.target as HTMLTextAreaElement).value)}
      />
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
    </div>
  );
}

// Checkboxes of a list's values; with a hint each, one a line (else in columns).
function Checks<T extends string>({ legend, options, value, onChange }: { legend: string; options: { value: T; label?: string }[]; value: T[]; onChange: (v: T[]) => void }) {
  const hinted = options.some((o) => o.label);
  return (
    <fieldset class="topics">
      <legend>{legend}</legend>
      <ul class={hinted ? 'list hinted' : 'list perms'}>
        {options.map((o) => (
          <li key={o.value}>
            <label class="check">
              <input
                type="checkbox"
                checked={value.includes(o.value)}
                onChange={(e) => {
                  const on = (e.target as HTMLInputElement).checked;
                  // kept in the listed order
                  onChange(options.map((x) => x.value).filter((v) => (v === o.value ? on : value.includes(v))));
                }}
              />{' '}
              <code>{o.value}</code>
              {o.label && <small>: {o.label}</small>}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}

function FirstParty({ value, onChange }: { value: boolean; onChange: (v: boolean) => void }) {
  return (
    <label class="check first-party">
      <input type="checkbox" checked={value} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} /> First party (one of the store's own applications: the consent screen may be skipped)
    </label>
  );
}

const URI_HINT = 'One a line: https, http on 127.0.0.1 or localhost, or for a public native app a scheme such as com.example.app:/callback.';

function CreateClient({ where, created, onCreated, onClosed }: { where: string; created?: WithSecret; onCreated: (c: WithSecret) => void; onClosed: () => void }) {
  const [name, setName] = useState('');
  const [redirects, setRedirects] = useState('');
  const [logouts, setLogouts] = useState('');
  const [grants, setGrants] = useState<GrantType[]>(['authorization_code']);
  const [method, setMethod] = useState<Method>('client_secret_basic');
  const [jwks, setJwks] = useState('');
  const [scopes, setScopes] = useState<ClientScope[]>(['openid']);
  const [firstParty, setFirstParty] = useState(false);
  const action = useAction();
  return (
    <Section title="Register an application">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!grants.length) return action.setError('Pick at least one grant type.');
          if (!scopes.length) return action.setError('Pick at least one scope.');
          let keys: { keys: Record<string, unknown>[] } | undefined;
          if (method === 'private_key_jwt') {
            try {
              keys = JSON.parse(jwks) as { keys: Record<string, unknown>[] };
            } catch {
              return action.setError('The public keys are not JSON: paste a JWK Set, { "keys": [...] }.');
            }
          }
          void action.run(async () => {
            const { oauthClient } = await must(
              api.POST('/auth-api/v1/oauthclients', {
                body: {
                  name: name.trim(),
                  redirectUris: lines(redirects),
                  postLogoutRedirectUris: lines(logouts),
                  grantTypes: grants,
                  tokenEndpointAuthMethod: method,
                  scopes,
                  firstParty,
                  ...(keys && { jwks: keys as never }),
                },
              }),
            );
            setName('');
            setRedirects('');
            setLogouts('');
            setJwks('');
            onCreated(oauthClient);
          });
        }}
      >
        <Field label="Name" value={name} onInput={setName} required autocomplete="off" hint="Shown to users on the consent screen." />
        <TextArea label="Redirect URIs" value={redirects} onInput={setRedirects} hint={`${URI_HINT} At least one with authorization_code.`} />
        <TextArea label="Post-logout redirect URIs" value={logouts} onInput={setLogouts} hint="Where the browser may go after a sign-out; one a line." />
        <Select label="Client authentication" value={method} options={METHODS} onChange={(v) => setMethod(v as Method)} />
        {method === 'private_key_jwt' && <TextArea label="Public keys (JWK Set)" value={jwks} onInput={setJwks} rows={4} hint='{ "keys": [ ... ] }: public keys only.' />}
        <Checks legend="Grant types" options={GRANTS} value={grants} onChange={setGrants} />
        <Checks legend="Scopes" options={SCOPES.map((value) => ({ value }))} value={scopes} onChange={setScopes} />
        <FirstParty value={firstParty} onChange={setFirstParty} />
        <ErrorText error={action.error} />
        <div class="row start actions">
          <button disabled={action.busy}>Register the application</button>
        </div>
      </form>
      {created &&
        (created.clientSecret ? <SecretOnce client={created} how="created" where={where} onClose={onClosed} /> : <Registered client={created} where={where} onClose={onClosed} />)}
    </Section>
  );
}

function EditClient({
  client: c,
  where,
  onChanged,
  rotated,
  onRotated,
  onClosed,
  onDeleted,
}: {
  client: Client;
  where: string;
  onChanged: () => void;
  rotated?: WithSecret;
  onRotated: (c: WithSecret) => void;
  onClosed: () => void;
  onDeleted: () => void;
}) {
  const [name, setName] = useState(c.name);
  const [redirects, setRedirects] = useState(c.redirectUris.join('\n'));
  const [logouts, setLogouts] = useState(c.postLogoutRedirectUris.join('\n'));
  const [grants, setGrants] = useState<GrantType[]>(c.grantTypes);
  const [scopes, setScopes] = useState<ClientScope[]>(c.scopes);
  const [firstParty, setFirstParty] = useState(c.firstParty);
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  const path = { params: { path: { id: c.id } } };
  const run = (what: () => Promise<unknown>) => {
    setNotice(undefined);
    return action.run(what);
  };
  return (
    <Section title={`Application ${c.name}`}>
      <p>
        Client ID <code>{c.clientId}</code> <Copy text={c.clientId} label="Copy the client ID" />; {typeOf(c)} (<code>{c.tokenEndpointAuthMethod}</code>, which cannot change: register
        another application for another one); registered {when(c.createdAt)}, changed {when(c.updatedAt)}.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!grants.length) return action.setError('Pick at least one grant type.');
          if (!scopes.length) return action.setError('Pick at least one scope.');
          void run(async () => {
            await must(
              api.PATCH('/auth-api/v1/oauthclients/{id}', {
                ...path,
                body: { name: name.trim(), redirectUris: lines(redirects), postLogoutRedirectUris: lines(logouts), grantTypes: grants, scopes, firstParty },
              }),
            );
            setNotice(`Saved in ${where}.`);
            onChanged();
          });
        }}
      >
        <Field label="Name" value={name} onInput={setName} required autocomplete="off" />
        <TextArea label="Redirect URIs" value={redirects} onInput={setRedirects} hint={URI_HINT} />
        <TextArea label="Post-logout redirect URIs" value={logouts} onInput={setLogouts} />
        <Checks legend="Grant types" options={GRANTS} value={grants} onChange={setGrants} />
        <Checks legend="Scopes" options={SCOPES.map((value) => ({ value }))} value={scopes} onChange={setScopes} />
        <FirstParty value={firstParty} onChange={setFirstParty} />
        <div class="row start actions">
          <button disabled={action.busy}>Save</button>
        </div>
      </form>
      <ErrorText error={action.error} />
      <Notice text={notice} />
      <div class="row start actions">
        {hasSecret(c) && (
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            onClick={() =>
              confirm(`Give ${c.name} a new client secret? The current one stops working at once: deploy the new one where it is used.`) &&
              run(async () => {
                onRotated((await must(api.POST('/auth-api/v1/oauthclients/{id}/rotate-secret', path))).oauthClient);
                onChanged();
              })
            }
          >
            Rotate the secret
          </button>
        )}
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() =>
            confirm(`Delete the application ${c.name} (${c.clientId}) from ${where}? It can no longer sign anyone in.`) &&
            run(async () => {
              await must(api.DELETE('/auth-api/v1/oauthclients/{id}', path));
              onDeleted();
            })
          }
        >
          Delete the application
        </button>
      </div>
      {rotated && <SecretOnce client={rotated} how="rotated" where={where} onClose={onClosed} />}
    </Section>
  );
}
