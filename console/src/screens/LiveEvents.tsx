import { useEffect, useState } from 'preact/hooks';
import { featureOff, sentenceOf, type FeatureOff } from '../api/client';
import { session as currentSession } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Off, Scope, Section } from '../ui';

interface Arrived {
  at: string;
  name: string;
  data: unknown;
}

// Subscribes to an SSE subscription of the settings (docs/events.md; the shipped `live-sse`)
// with the store's topics the administrator may see, and shows the events as they arrive.
export default function LiveEvents({ session }: ScreenProps) {
  const [name, setName] = useState('live-sse');
  const [topics, setTopics] = useState('userCreated,userUpdated,apiKeyCreated,sessionEnded,storeCreated');
  const [on, setOn] = useState(false);
  const [accepted, setAccepted] = useState<string[]>();
  const [rejected, setRejected] = useState<string[]>([]);
  const [events, setEvents] = useState<Arrived[]>([]);
  const [error, setError] = useState<string>();
  const [off, setOff] = useState<FeatureOff>();

  useEffect(() => {
    if (!on) return;
    const s = currentSession()!;
    const query = new URLSearchParams({ topics: topics.replace(/\s+/g, ''), access_token: s.accessToken ?? '', ...(s.target && { _store: s.target }) });
    const source = new EventSource(`/events/${encodeURIComponent(name.trim())}/stream?${query}`);
    setError(undefined);
    setOff(undefined);
    source.addEventListener('subscribed', (m) => {
      const answer = JSON.parse((m as MessageEvent).data) as { topics: string[]; rejected: { topic: string; reason: string }[] };
      setAccepted(answer.topics);
      setRejected(answer.rejected.map((r) => `${r.topic} (${r.reason})`));
    });
    source.addEventListener('event', (m) => {
      const e = JSON.parse((m as MessageEvent).data) as { name: string; data: unknown };
      setEvents((list) => [{ at: new Date().toLocaleTimeString(), name: e.name, data: e.data }, ...list].slice(0, 200));
    });
    source.addEventListener('error', (m) => {
      const text = (m as MessageEvent).data;
      const answer = text ? JSON.parse(text) : undefined;
      // No such subscription in the settings: that one is off, not broken.
      if (featureOff(answer)) setOff({ what: `The SSE subscription ${name.trim()} is`, key: 'eventSubscriptions' });
      else if (answer) setError(sentenceOf(answer));
      else if (source.readyState === EventSource.CLOSED) setError('The stream could not be opened: check the subscription name and the topics.');
    });
    return () => {
      source.close();
      setAccepted(undefined);
    };
  }, [on]);

  return (
    <>
      <h1>Live events</h1>
      <Scope session={session} />
      <Section title="Subscription">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setEvents([]);
            setOn(!on);
          }}
        >
          <Field label="Subscription (settings eventSubscriptions, SSE)" value={name} onInput={setName} required />
          <Field label="Topics, separated by commas" value={topics} onInput={setTopics} required />
          <button>{on ? 'Stop' : 'Start'}</button>
        </form>
        <ErrorText error={error} />
        <Off off={off} />
        <Notice text={accepted ? `Listening to ${accepted.join(', ') || 'no topic'}.` : undefined} />
        {rejected.length > 0 && <p>Refused: {rejected.join(', ')}.</p>}
      </Section>
      <Section title="Events">
        <ul class="list" aria-label="Events" aria-live="polite">
          {events.map((e, i) => (
            <li key={`${events.length - i}`}>
              <strong>{e.name}</strong> at {e.at}
              <pre>{JSON.stringify(e.data, null, 2)}</pre>
            </li>
          ))}
          {!events.length && <li>No event yet.</li>}
        </ul>
      </Section>
    </>
  );
}
