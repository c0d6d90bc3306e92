import { useCallback, useEffect, useState } from 'react';
import type { ServiceClient } from '@svc/client';
import { identityOf, isComplete, useClient, useSession } from './provider.js';

export type CurrentUser = NonNullable<Awaited<ReturnType<ServiceClient['currentUser']>>>;

export interface UserState {
  // The service's answer to currentUser(); null when signed out or a sign-in step is pending.
  user: CurrentUser | null;
  loading: boolean;
  error: Error | undefined;
  refetch: () => void;
}

interface Answer {
  asked: string;
  identity: string;
  user: CurrentUser | null;
  error: Error | undefined;
}

// The signed-in user as the service sees it, asked again when the session's identity changes
// (another user, a new session, a completed step) but not on a token refresh.
export function useUser(): UserState {
  const client = useClient();
  const { session, loading: sessionLoading } = useSession();
  const identity = identityOf(session);
  const complete = isComplete(session);
  const [round, setRound] = useState(0);
  const [answer, setAnswer] = useState<Answer | undefined>(undefined);
  const asked = `${round}\n${identity}`;

  useEffect(() => {
    if (sessionLoading) return;
    // Nothing to ask: a pending sign-in's token opens no user route.
    if (!complete) {
      setAnswer({ asked, identity, user: null, error: undefined });
      return;
    }
    let live = true;
    client.currentUser().then(
      (user) => void (live && setAnswer({ asked, identity, user, error: undefined })),
      (error: unknown) => void (live && setAnswer({ asked, identity, user: null, error: error instanceof Error ? error : new Error(String(error)) })),
    );
    return () => {
      live = false;
    };
  }, [client, asked, identity, complete, sessionLoading]);

  const refetch = useCallback(() => setRound((n) => n + 1), []);
  const current = answer?.identity === identity ? answer : undefined;
  return { user: current?.user ?? null, loading: sessionLoading || answer?.asked !== asked, error: current?.error, refetch };
}
