import { useState } from 'preact/hooks';
import { api, featureOff, must, signOut, STORE_HEADER, type FeatureOff } from '../api/client';
import { setSession, updateLogin, type LoginAnswer, type Session } from '../api/session';
import { credentialJson, passkeysSupported, requestOptions } from '../api/webauthn';
import { ErrorText, Field, Notice, Off, Select, useAction, useLoad } from '../ui';
import { PasskeySetup, TotpSetup, type Completed } from './Enrol';

// Sign-in: the store (or the root, for SaaS administrators), then a password or a passkey.
// What the session then says is pending is done by <PendingStep>.
export function SignIn() {
  const [store, setStore] = useState(new URLSearchParams(location.search).get('store') ?? '');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  // Known only once asked: passkeys switched off in the settings answer 404 WebAuthnNotConfigured.
  const [passkeysOff, setPasskeysOff] = useState<FeatureOff>();
  const stores = useLoad(async () => (await must(api.GET('/auth-api/v1/briefstores', { params: { query: { pageRowCount: 100 } } }))).stores, []);
  const headers = store ? { [STORE_HEADER]: store } : {};
  const signedIn = (login: LoginAnswer) => setSession({ login, store, target: store });
  const options = [{ value: '', label: 'Root (SaaS administration)' }, ...(stores.data ?? []).map((s) => ({ value: s.codename, label: `${s.name} (${s.codename})` }))];
  if (store && !options.some((o) => o.value === store)) options.push({ value: store, label: store });

  return (
    <main class="signin" id="main">
      <h1>Admin console</h1>
      <form
        class="card"
        aria-label="Sign in"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => signedIn(await must(api.POST('/auth-api/login', { body: { username: username.trim(), password }, headers }))));
        }}
      >
        <Select label="Store" value={store} options={options} onChange={setStore} />
        <ErrorText error={stores.error} />
        <Field label="Email or mobile" name="username" value={username} onInput={setUsername} autocomplete="username" required />
        <Field label="Password" name="password" type="password" value={password} onInput={setPassword} autocomplete="current-password" required />
        <ErrorText error={action.error} />
        <button disabled={action.busy}>Sign in</button>
        <Off off={passkeysOff} />
        {passkeysSupported() && !passkeysOff && (
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            onClick={() =>
              action.run(async () => {
                const options = await must(api.POST('/auth-api/passkeys/login/options', { headers })).catch((e: unknown) => {
                  if (!featureOff(e)) throw e;
                  setPasskeysOff(featureOff(e));
                });
                if (!options) return;
                const credential = (await navigator.credentials.get({ publicKey: requestOptions(options as Record<string, unknown>) })) as PublicKeyCredential | null;
                if (!credential) throw new Error('No passkey was chosen.');
                signedIn(await must(api.POST('/auth-api/passkeys/login/verify', { body: { response: credentialJson(credential) } as never, headers })));
              })
            }
          >
            Sign in with a passkey
          </button>
        )}
      </form>
    </main>
  );
}

// The second factor or the enrolment the session is waiting for.
export function PendingStep({ session, step }: { session: Session; step: 'totp' | 'passkey' | 'email' | 'mobile' | 'enrol' }) {
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState(false);
  const [sent, setSent] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { code: code.trim() };
      if (step === 'totp') updateLogin(await must(recovery ? api.POST('/auth-api/mfa/recovery', { body }) : api.POST('/auth-api/mfa/totp/verify', { body })));
      else if (step === 'email') updateLogin(await must(api.POST('/auth-api/verification-services/email-2factor-verification/complete', { body: { secretCode: code.trim() }, params: { header: { 'accept-language': navigator.language } } })));
      else updateLogin(await must(api.POST('/auth-api/verification-services/mobile-2factor-verification/complete', { body: { secretCode: code.trim() }, params: { header: { 'accept-language': navigator.language } } })));
      setCode('');
    });
  };
  const send = () =>
    action.run(async () => {
      const path = step === 'email' ? '/auth-api/verification-services/email-2factor-verification/start' : '/auth-api/verification-services/mobile-2factor-verification/start';
      await must(api.POST(path, { params: { header: { 'accept-language': navigator.language } } }));
      setSent(true);
    });
  const who = session.login.email ?? session.login.mobile ?? '';
  // The answer of an enrolment the role required completes the sign-in with fresh tokens.
  const enrolled = (completed?: Completed) => updateLogin(completed ?? { ...session.login, mfaEnrollmentNeeded: undefined });
  // One of the user's passkeys as the second factor (its own store, as every factor).
  const withPasskey = () =>
    action.run(async () => {
      const options = await must(api.POST('/auth-api/passkeys/2fa/options'));
      const credential = (await navigator.credentials.get({ publicKey: requestOptions(options as Record<string, unknown>) })) as PublicKeyCredential | null;
      if (!credential) throw new Error('No passkey was chosen.');
      updateLogin(await must(api.POST('/auth-api/passkeys/2fa/verify', { body: { response: credentialJson(credential) } as never })));
    });
  const passkeyToo = !!session.login.sessionNeedsPasskey2FA && passkeysSupported();

  return (
    <main class="signin" id="main">
      <h1>Admin console</h1>
      <section class="card" aria-label="Second step">
        {step === 'enrol' ? (
          <>
            <h2>Set up a second factor</h2>
            <p>Your role requires an authenticator app or a passkey before the console opens.</p>
            <TotpSetup onDone={enrolled} />
            <h3>Or a passkey</h3>
            <PasskeySetup onDone={enrolled} />
          </>
        ) : step === 'passkey' ? (
          <>
            <h2>Passkey</h2>
            <p>Confirm it is you with one of your passkeys.</p>
            <ErrorText error={action.error} />
            {passkeyToo ? (
              <button type="button" disabled={action.busy} onClick={() => void withPasskey()}>
                Use a passkey
              </button>
            ) : (
              <p>This browser cannot use passkeys: sign in from one that can.</p>
            )}
          </>
        ) : (
          <form onSubmit={submit}>
            {step === 'totp' && <h2>{recovery ? 'Recovery code' : 'Authenticator app'}</h2>}
            {step !== 'totp' && <h2>{step === 'email' ? 'Code sent by email' : 'Code sent by SMS'}</h2>}
            {step !== 'totp' && (
              <p>
                <button type="button" class="secondary" disabled={action.busy} onClick={send}>
                  {sent ? 'Send another code' : `Send a code to ${who}`}
                </button>
              </p>
            )}
            <Notice text={sent ? 'The code is on its way.' : undefined} />
            <Field
              label={recovery ? 'Recovery code' : step === 'totp' ? 'Code from the app' : 'Code'}
              value={code}
              onInput={setCode}
              inputMode={recovery ? 'text' : 'numeric'}
              autocomplete="one-time-code"
              required
            />
            <ErrorText error={action.error} />
            <button disabled={action.busy}>Continue</button>
            {step === 'totp' && (
              <button type="button" class="link" onClick={() => setRecovery(!recovery)}>
                {recovery ? 'Use the app instead' : 'Use a recovery code'}
              </button>
            )}
            {step === 'totp' && passkeyToo && (
              <button type="button" class="link" disabled={action.busy} onClick={() => void withPasskey()}>
                Use a passkey instead
              </button>
            )}
          </form>
        )}
        <p>
          <button type="button" class="link" onClick={() => void signOut()}>
            Cancel and sign out
          </button>
        </p>
      </section>
    </main>
  );
}
