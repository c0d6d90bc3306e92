import { PasskeyButton, SvcProvider } from '@svc/react';
import { useState } from 'preact/hooks';
import { api, featureOff, formatError, must, own, refused, type FeatureOff } from '../api/client';
import type { components } from '../api/schema';
import { client } from '../api/session';
import { passkeysSupported } from '../api/webauthn';
import { ErrorText, Field, Notice, Off, useAction } from '../ui';

type Setup = components['schemas']['TotpSetupResponse'];
// The sign-in an enrolment completed (the role required it), with fresh tokens.
export type Completed = components['schemas']['SecondFactorDoneResponse'];

// Adds an authenticator app: the QR code and secret the API gives, then a code to confirm it;
// the recovery codes are shown once. Used by the sign-in (when the role requires a factor) and
// by the Security screen. Factors are the administrator's own: its own store's header.
export function TotpSetup({ onDone }: { onDone: (completed?: Completed) => void }) {
  const [setup, setSetup] = useState<Setup>();
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState<string[]>();
  const [completed, setCompleted] = useState<Completed>();
  const action = useAction();
  if (recovery)
    return (
      <div>
        <p>The authenticator app is on. Keep these recovery codes somewhere safe: each signs you in once without the phone, and they are not shown again.</p>
        <ul class="codes" aria-label="Recovery codes">
          {recovery.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
        <button type="button" onClick={() => onDone(completed)}>
          I have kept them
        </button>
      </div>
    );
  if (!setup)
    return (
      <div>
        <ErrorText error={action.error} />
        <button type="button" disabled={action.busy} onClick={() => action.run(async () => setSetup(await must(api.POST('/auth-api/mfa/totp/setup', { headers: own() }))))}>
          Set up an authenticator app
        </button>
      </div>
    );
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          const confirmed = await must(api.POST('/auth-api/mfa/totp/confirm', { body: { code: code.trim() }, headers: own() }));
          setCompleted(confirmed.session);
          setRecovery(confirmed.recoveryCodes);
        });
      }}
    >
      <p>Scan this code with your authenticator app, or type the secret into it.</p>
      <img class="qr" alt="QR code of the authenticator app's secret" src={`data:image/svg+xml;utf8,${encodeURIComponent(setup.qrCodeSvg)}`} width={200} height={200} />
      <p>
        Secret: <code data-testid="totp-secret">{setup.secret}</code>
      </p>
      <Field label="Code from the app" value={code} onInput={setCode} inputMode="numeric" autocomplete="one-time-code" required />
      <ErrorText error={action.error} />
      <button disabled={action.busy}>Turn it on</button>
    </form>
  );
}

// Enrols a passkey of this browser for the signed-in user: @svc/react's PasskeyButton
// (client.passkey.register, which takes the session an enrolment the role required answers:
// onDone is given none).
export function PasskeySetup({ onDone }: { onDone: (completed?: Completed) => void }) {
  const [name, setName] = useState('This browser');
  const [done, setDone] = useState(false);
  const [off, setOff] = useState<FeatureOff>();
  if (!passkeysSupported()) return <p>This browser cannot hold passkeys.</p>;
  // Passkeys switched off in the settings: said, and nothing more to click.
  if (off) return <Off off={off} />;
  return (
    <SvcProvider client={client}>
      <form onSubmit={(e) => e.preventDefault()}>
        <Field label="Passkey name" value={name} onInput={setName} required />
        <Notice text={done ? 'Passkey added.' : undefined} />
        <PasskeyButton
          mode="register"
          name={name}
          errorClassName="error"
          formatError={formatError}
          onResult={() => {
            setDone(true);
            onDone();
          }}
          onError={(e) => {
            refused(e);
            setOff(featureOff(e));
          }}
        />
      </form>
    </SvcProvider>
  );
}
