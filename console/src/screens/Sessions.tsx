import { useState } from 'preact/hooks';
import { api, must, own } from '../api/client';
import type { ScreenProps } from '../nav';
import { ErrorText, Notice, Scope, Section, useAction, useLoad, when } from '../ui';

// The signed-in administrator's own devices (its sessions, in the store it signed in to).
export default function Sessions({ session }: ScreenProps) {
  // Its own sessions live in its own store, whatever store a SaaS administrator looks at.
  const headers = own();
  const list = useLoad(() => must(api.GET('/auth-api/sessions', { headers })), []);
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const sessions = list.data?.sessions ?? [];
  return (
    <>
      <h1>Sessions</h1>
      <Scope session={session} own />
      <Section title="Your devices">
        <ErrorText error={list.error ?? action.error} />
        <Notice text={notice} />
        <ul class="list" aria-label="Your sessions">
          {sessions.map((s) => (
            <li key={s.sessionId} class="row">
              <span>
                <strong>{[s.device.browser, s.device.os].filter(Boolean).join(' on ') || s.device.type}</strong> — {s.ip ?? 'no address'} — signed in {when(s.createdAt)}, last seen{' '}
                {when(s.lastSeenAt)}
                {s.current && <em> (this one)</em>}
              </span>
              {!s.current && (
                <button
                  type="button"
                  class="danger"
                  disabled={action.busy}
                  aria-label={`End the session of ${s.device.browser ?? 'a device'} signed in ${when(s.createdAt)}`}
                  onClick={() =>
                    action.run(async () => {
                      await must(api.DELETE('/auth-api/sessions/{id}', { params: { path: { id: s.sessionId } }, headers }));
                      setNotice('The session was ended.');
                      list.reload();
                    })
                  }
                >
                  End
                </button>
              )}
            </li>
          ))}
        </ul>
        <button
          type="button"
          class="danger"
          disabled={action.busy || sessions.length < 2}
          onClick={() =>
            action.run(async () => {
              await must(api.DELETE('/auth-api/sessions', { headers }));
              setNotice('Every other device was signed out.');
              list.reload();
            })
          }
        >
          Sign out every other device
        </button>
      </Section>
    </>
  );
}
