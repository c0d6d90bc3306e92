import { useEffect, useRef, useState } from 'react';
import type { ChannelError, EventPacket, SubscriptionStatus } from '@svc/client';
import { identityOf, isComplete, useClient, useSession } from './provider.js';

export interface UseEventsOptions<T extends string> {
  // Called with each event as it arrives (the list is kept as well, unless `limit` is 0).
  onEvent?: (event: EventPacket<T>) => void;
  // How many of the latest events the list keeps (default 50).
  limit?: number;
  // The subscription's transport, as the service's `eventSubscriptions` setting declares it.
  transport?: 'websocket' | 'sse';
  // false: no subscription (default true).
  enabled?: boolean;
}

export interface EventsState<T extends string> {
  // The latest events, oldest first, at most `limit`; emptied when the signed-in user changes.
  events: EventPacket<T>[];
  // 'idle' while signed out (or disabled); then the subscription's own status.
  status: SubscriptionStatus | 'idle';
  // The topics the service accepted and refused (not allowed to this user) at the last connection.
  subscribed: { topics: string[]; rejected: string[] } | undefined;
  error: ChannelError | undefined;
}

interface Held<T extends string> extends Omit<EventsState<T>, 'status'> {
  key: string;
  status: SubscriptionStatus;
}

// Subscribes to `topics` of the service's event subscription while the component is mounted and
// a sign-in is complete, again when the signed-in user (or session) changes, not on a refresh.
export function useEvents<T extends string>(subscription: string, topics: readonly T[], options: UseEventsOptions<T> = {}): EventsState<T> {
  const client = useClient();
  const { session } = useSession();
  const { enabled = true, limit = 50, transport } = options;
  const onEvent = useRef(options.onEvent);
  useEffect(() => {
    onEvent.current = options.onEvent;
  });
  const active = enabled && isComplete(session);
  // Topics by value: an inline array literal does not subscribe again on every render.
  const topicList = JSON.stringify(topics);
  const key = active ? JSON.stringify([subscription, transport ?? '', topicList, identityOf(session)]) : '';
  const [held, setHeld] = useState<Held<T> | undefined>(undefined);

  useEffect(() => {
    if (!key) return;
    let live = true;
    const update = (change: (current: Held<T>) => Held<T>) =>
      live && setHeld((previous) => change(previous?.key === key ? previous : { key, events: [], status: 'connecting', subscribed: undefined, error: undefined }));
    const handle = client.events.subscribe<T>(subscription, {
      topics: JSON.parse(topicList) as T[],
      ...(transport && { transport }),
      onEvent: (event) => {
        onEvent.current?.(event);
        if (limit > 0) update((h) => ({ ...h, events: [...h.events, event].slice(-limit) }));
      },
      onSubscribed: (answer) => update((h) => ({ ...h, subscribed: answer, error: undefined })),
      onError: (error) => update((h) => ({ ...h, error })),
      onStatus: (status) => update((h) => ({ ...h, status })),
    });
    return () => {
      live = false;
      handle.close();
    };
    // `key` holds the subscription, transport, topics and identity.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, key, limit]);

  const current = key && held?.key === key ? held : undefined;
  if (!current) return { events: [], status: key ? 'connecting' : 'idle', subscribed: undefined, error: undefined };
  return { events: current.events, status: current.status, subscribed: current.subscribed, error: current.error };
}
