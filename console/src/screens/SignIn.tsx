import { PasskeyButton, PasswordSignIn, SvcProvider, TotpStep } from '@svc/react';
import { useMemo, useState } from 'preact/hooks';
import { api, attempt, featureOff, formatError, must, refused, type FeatureOff } from '../api/client';
import { adoptCompleted, client, signingIn, signOut, type Session } from '../api/session';
import { passkeysSupported } from '../api/webauthn';
import { ErrorText, Field, Notice, Off, Select, useAction, useLoad } from '../ui';
import { PasskeySetup, TotpSetup, type Completed } from './Enrol';

// Sign-in: the store (or the root, for SaaS administrators), then a password or a passkey.
// What the session then says is pending is done by <PendingStep>. Each step is @svc/client's,
// which keeps the session it answers (session.ts); the password form, the authenticator-app step
// and the passkey buttons are @svc/react's building blocks (through preact/compat: vite.config.ts).
export function SignIn() {
  const [store, setStore] = useState(new URLSearchParams(location.search).get('store') ?? '');
  // Known only once asked: passkeys switched off in the settings answer 404 WebAuthnNotConfigured.
  const [passkeysOff, setPasskeysOff] = useState<FeatureOff>();
  const stores = useLoad(async () => (await must(api.GET('/auth-api/v1/briefstores', { params: { query: { pageRowCount: 100 } } }))).stores, []);
  const options = [{ value: '', label: 'Root (SaaS administration)' }, ...(stores.data ?? []).map((s) => ({ value: s.codename, label: `${s.name} (${s.codename})` }))];
  if (store && !options.some((o) => o.value === store)) options.push({ value: store, label: store });
  const storeClient = useMemo(() => signingIn(store), [store]);

  return (
    <main class="signin" id="main">
      <h1>Admin console</h1>
      <div class="card">
        <Select label="Store" value={store} options={options} onChange={setStore} />
        <ErrorText error={stores.error} />
        <SvcProvider client={storeClient}>
          <PasswordSignIn ariaLabel="Sign in" className="step" usernameLabel="Email or mobile" errorClassName="error" formatError={formatError} />
          <Off off={passkeysOff} />
          {passkeysSupported() && !passkeysOff && (
            <PasskeyButton mode="signIn" className="secondary" errorClassName="error" formatError={formatError} onError={(e) => setPasskeysOff(featureOff(e))} />
          )}
        </SvcProvider>
      </div>
    </main>
  );
}

// The second factor or the enrolment the session is waiting for.
export function PendingStep({ session, step }: { session: Session; step: 'totp' | 'passkey' | 'email' | 'mobile' | 'enrol' }) {
  const [code, setCode] = useState('');
  const [sent, setSent] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const factor = client.secondFactor;
      const typed = code.trim();
      await attempt(step === 'email' ? factor.email(typed) : factor.sms(typed));
      setCode('');
    });
  };
  const send = () =>
    action.run(async () => {
      await attempt(step === 'email' ? client.secondFactor.sendEmailCode() : client.secondFactor.sendSmsCode());
      setSent(true);
    });
  const who = session.email ?? session.mobile ?? '';
  // The answer of an enrolment the role required completes the sign-in with fresh tokens (a
  // passkey's, @svc/client keeps itself).
  const enrolled = (completed?: Completed) => completed && adoptCompleted(completed);
  // One of the user's passkeys as the second factor (its own store, as every factor).
  const withPasskey = (label: string) => (
    <PasskeyButton mode="secondFactor" errorClassName="error" formatError={formatError} onError={refused}>
      {label}
    </PasskeyButton>
  );
  const passkeyToo = session.pendingFactors.includes('passkey') && passkeysSupported();

  return (
    <main class="signin" id="main">
      <h1>Admin console</h1>
      <SvcProvider client={client}>
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
              {passkeyToo ? (
                withPasskey('Use a passkey')
              ) : (
                <p>This browser cannot use passkeys: sign in from one that can.</p>
              )}
            </>
          ) : step === 'totp' ? (
            <>
              <h2>Authenticator app</h2>
              <TotpStep
                className="step"
                errorClassName="error"
                codeLabel="Code from the app"
                recoveryCodeLabel="Recovery code"
                submitLabel="Continue"
                useRecoveryCodeLabel="Use a recovery code"
                useCodeLabel="Use the app instead"
                formatError={formatError}
                onError={refused}
              />
              {passkeyToo && <div>{withPasskey('Use a passkey instead')}</div>}
            </>
          ) : (
            <form onSubmit={submit}>
              <h2>{step === 'email' ? 'Code sent by email' : 'Code sent by SMS'}</h2>
              <p>
                <button type="button" class="secondary" disabled={action.busy} onClick={send}>
                  {sent ? 'Send another code' : `Send a code to ${who}`}
                </button>
              </p>
              <Notice text={sent ? 'The code is on its way.' : undefined} />
              <Field label="Code" value={code} onInput={setCode} inputMode="numeric" autocomplete="one-time-code" required />
              <ErrorText error={action.error} />
              <button disabled={action.busy}>Continue</button>
            </form>
          )}
          <p>
            <button type="button" class="link" onClick={() => void signOut()}>
              Cancel and sign out
            </button>
          </p>
        </section>
      </SvcProvider>
    </main>
  );
}
