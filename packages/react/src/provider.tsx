import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { ServiceClient, Session } from '@svc/client';

// The session as the app sees it: `loading` until the client's storage has answered (a stored
// session is then known), so a page does not flash its signed-out view on a reload.
export interface SessionState {
  session: Session | undefined;
  loading: boolean;
}

interface SvcContextValue {
  client: ServiceClient;
  state: SessionState;
}

const SvcContext = createContext<SvcContextValue | null>(null);

export interface SvcProviderProps {
  client: ServiceClient;
  children?: ReactNode;
}

// One listener on the client for the whole tree: every hook below reads the same session, so
// two components never disagree about who is signed in.
export function SvcProvider({ client, children }: SvcProviderProps) {
  // Tagged with its client: a new client prop shows `loading` until its own storage answered.
  const [held, setHeld] = useState<SessionState & { client: ServiceClient | undefined }>({ client: undefined, session: undefined, loading: true });
  useEffect(() => {
    let live = true;
    let heard = false;
    const off = client.onSessionChange((session) => {
      heard = true;
      setHeld({ client, session, loading: false });
    });
    client.session().then(
      (session) => void (live && !heard && setHeld({ client, session, loading: false })),
      () => void (live && !heard && setHeld({ client, session: undefined, loading: false })),
    );
    return () => {
      live = false;
      off();
    };
  }, [client]);
  const state = held.client === client ? held : undefined;
  const value = useMemo<SvcContextValue>(() => ({ client, state: state ? { session: state.session, loading: state.loading } : { session: undefined, loading: true } }), [client, state]);
  return <SvcContext.Provider value={value}>{children}</SvcContext.Provider>;
}

function useSvc(hook: string): SvcContextValue {
  const value = useContext(SvcContext);
  if (!value) throw new Error(`${hook}() needs a <SvcProvider client={...}> above this component`);
  return value;
}

export function useClient(): ServiceClient {
  return useSvc('useClient').client;
}

// `{ session, loading }`: the client's session (undefined when signed out), re-rendered on every
// change the client reports (sign-in, a completed factor, refresh, sign-out, another tab).
export function useSession(): SessionState {
  return useSvc('useSession').state;
}

// A session past every step: no second factor pending, no enrolment owed.
export function isComplete(session: Session | undefined): session is Session {
  return session !== undefined && session.pendingFactors.length === 0 && !session.mfaEnrollmentNeeded;
}

// What identifies a signed-in user's session: it changes on sign-in, sign-out, a completed step
// or another user, not on a token refresh ('' when signed out).
export function identityOf(session: Session | undefined): string {
  return session ? [session.store, session.userId, session.sessionId, isComplete(session) ? 'complete' : 'pending'].join('\n') : '';
}
