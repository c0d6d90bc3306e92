import { useId, useState, type FormEvent } from 'react';
import type { Session } from '@svc/client';
import { PasskeyButton, PasswordSignIn, TotpStep, useClient, useEvents, useSession, useUser } from '@svc/react';

export function App({ store }: { store: string }) {
  const { session, loading } = useSession();
  return (
    <main>
      <h1>Store {store}</h1>
      {loading ? <p>Loading…</p> : !session ? <SignedOut /> : session.pendingFactors.length > 0 ? (
        <SecondStep session={session} />
      ) : session.mfaEnrollmentNeeded ? (
        <Enrol />
      ) : (
        <SignedIn />
      )}
    </main>
  );
}

function SignedOut() {
  return (
    <>
      <p role="status">Signed out</p>
      <section aria-labelledby="sign-in">
        <h2 id="sign-in">Sign in</h2>
        <PasswordSignIn />
        <PasskeyButton mode="signIn" />
      </section>
      <SignUp />
    </>
  );
}

// A user of this store registers (the route is open to anyone), then signs in above.
function SignUp() {
  const client = useClient();
  const id = useId();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState('');
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const get = (name: string) => String(form.get(name) ?? '');
    setBusy(true);
    setMessage('');
    try {
      const { user } = await client.signUp.user({ fullname: get('fullname'), email: get('email'), password: get('password') });
      setMessage(`Account created for ${user.email ?? get('email')}: sign in above.`);
    } catch (error) {
      setMessage(`Not created: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Create an account</h2>
      <form onSubmit={(e) => void submit(e)} aria-busy={busy}>
        <label htmlFor={`${id}-fullname`}>Full name</label>
        <input id={`${id}-fullname`} name="fullname" autoComplete="name" required />
        <label htmlFor={`${id}-email`}>New account email</label>
        <input id={`${id}-email`} name="email" type="email" autoComplete="email" required />
        <label htmlFor={`${id}-password`}>New account password</label>
        <input id={`${id}-password`} name="password" type="password" autoComplete="new-password" minLength={8} required />
        <button type="submit" disabled={busy}>
          Create account
        </button>
      </form>
      <p aria-live="polite">{message}</p>
    </section>
  );
}

// A sign-in waiting for its second factor: the steps the service offers this user.
function SecondStep({ session }: { session: Session }) {
  const client = useClient();
  return (
    <section aria-labelledby="second-step">
      <h2 id="second-step">Second step</h2>
      {session.pendingFactors.includes('totp') ? <TotpStep /> : null}
      {session.pendingFactors.includes('passkey') ? <PasskeyButton mode="secondFactor" /> : null}
      <button type="button" onClick={() => void client.signOut()}>
        Cancel
      </button>
    </section>
  );
}

// The user's role requires a second factor it has none of: adding a passkey completes the sign-in
// (the client takes the session the enrolment answers).
function Enrol() {
  const client = useClient();
  return (
    <section aria-labelledby="enrol">
      <h2 id="enrol">Add a passkey to continue</h2>
      <p>Your role requires a second factor. Add a passkey to continue.</p>
      <PasskeyButton mode="register" name="This browser" />
      <button type="button" onClick={() => void client.signOut()}>
        Cancel
      </button>
    </section>
  );
}

function SignedIn() {
  const client = useClient();
  const { user, loading, error } = useUser();
  const [passkey, setPasskey] = useState('');
  return (
    <>
      <p role="status">{loading ? 'Loading your account…' : user ? `Signed in as ${user.email ?? user.userId}` : `Not signed in${error ? `: ${error.message}` : ''}`}</p>
      <section aria-labelledby="passkeys">
        <h2 id="passkeys">Passkeys</h2>
        <PasskeyButton mode="register" name="This browser" onResult={(answer) => setPasskey(`Passkey added: ${answer.passkey.name}`)} />
        <p aria-live="polite">{passkey}</p>
      </section>
      <LiveUsers />
      <button type="button" onClick={() => void client.signOut()}>
        Sign out
      </button>
    </>
  );
}

// The store's new users as they register: the `live` subscription's `userCreated` topic.
function LiveUsers() {
  const { events, status, subscribed, error } = useEvents('live', ['userCreated'], { limit: 20 });
  return (
    <section aria-labelledby="live">
      <h2 id="live">New users, live</h2>
      <p data-status={status} data-subscribed={subscribed ? subscribed.topics.join(',') : ''}>
        Live events: {status}
        {error ? ` (${error.message})` : ''}
      </p>
      <ul aria-label="New users" aria-live="polite">
        {[...events].reverse().map((event) => (
          <li key={`${event.data.id}`}>
            {event.data.fullname ?? ''} {event.data.email ?? ''}
          </li>
        ))}
      </ul>
    </section>
  );
}
