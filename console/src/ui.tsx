import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { featureOff, type FeatureOff } from './api/client';
import { storeName, type Session } from './api/session';

// Small building blocks shared by the screens.

// An error sentence, announced to screen readers.
export function ErrorText({ error }: { error?: string }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

export function Notice({ text }: { text?: string }) {
  return text ? <p class="notice" role="status">{text}</p> : null;
}

// A feature the settings switch off: said plainly, with the key that turns it on; not an error.
export function Off({ off }: { off?: FeatureOff }) {
  return off ? (
    <p class="off" role="status">
      {off.what} off in this service's settings (<code>{off.key}</code>).
    </p>
  ) : null;
}

// Which store a screen acts on: the looked-at store's screens, or the administrator's own
// sign-in (its sessions and factors, in the store it signed in to).
export function Scope({ session, own }: { session: Session; own?: boolean }) {
  return (
    <p class="scope">
      {own ? (
        <>Your own, in {session.store ? `store ${session.store}` : 'the root store'} where you signed in{session.target !== session.store && `, whichever store you look at`}.</>
      ) : (
        <>
          Acting on <strong>{storeName(session)}</strong>.
        </>
      )}
    </p>
  );
}

// "user" or "users" for a count; plural: "1 user", "2 users".
export function noun(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}

export function plural(n: number, one: string, many?: string): string {
  return `${n} ${noun(n, one, many)}`;
}

// A labelled input: the label names it for assistive technology and tests.
export function Field(props: {
  label: string;
  value: string;
  onInput: (value: string) => void;
  type?: 'text' | 'password' | 'email' | 'search' | 'tel' | 'url' | 'datetime-local';
  name?: string;
  autocomplete?: string;
  required?: boolean;
  inputMode?: 'numeric' | 'text' | 'email' | 'search';
  hint?: string;
}) {
  const id = useRef(`f${Math.random().toString(36).slice(2, 8)}`).current;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        autocomplete={props.autocomplete}
        required={props.required}
        inputMode={props.inputMode}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
    </div>
  );
}

export function Select(props: { label: string; value: string; options: { value: string; label: string; disabled?: boolean }[]; onChange: (value: string) => void }) {
  const id = useRef(`s${Math.random().toString(36).slice(2, 8)}`).current;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map((o) => (
          <option value={o.value} key={o.value} disabled={o.disabled}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

// Runs an action, keeping its pending state and its error sentence.
export function useAction(): { busy: boolean; error?: string; run: (action: () => Promise<unknown>) => Promise<void>; setError: (e?: string) => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

// Loads data for a screen; `reload` loads it again. A feature switched off is `off`, not an error.
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: string; off?: FeatureOff; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string; off?: FeatureOff; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (e: Error) => {
        const off = featureOff(e);
        if (live) setState(off ? { off, loading: false } : { error: e.message, loading: false });
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

export function Pager(props: { page: number; pages: number; total?: number; onPage: (page: number) => void }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous
      </button>
      <span>
        Page {props.page} of {Math.max(props.pages, 1)}
        {props.total !== undefined && ` (${props.total})`}
      </span>
      <button type="button" disabled={props.page >= props.pages} onClick={() => props.onPage(props.page + 1)}>
        Next
      </button>
    </nav>
  );
}

// A table of rows with its column headings; `actions` adds a last column for row buttons
// (named for screen readers only), `caption` names it for them. In a narrow column each row is
// stacked, its cells labelled by their headings (data-label, styles.css), so no cell or button
// is out of sight.
export function Table(props: { columns: string[]; actions?: boolean; caption?: string; children: ComponentChildren }) {
  const body = useRef<HTMLTableSectionElement>(null);
  useLayoutEffect(() => {
    for (const row of Array.from(body.current?.rows ?? [])) {
      Array.from(row.cells).forEach((cell, i) => {
        if (cell.colSpan === 1) cell.dataset.label = props.columns[i] ?? '';
      });
    }
  });
  return (
    <div class="table-wrap">
      <table class="stack">
        {props.caption && <caption class="sr-only">{props.caption}</caption>}
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {props.actions && (
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody ref={body}>{props.children}</tbody>
      </table>
    </div>
  );
}

// A search box and its button; `onSearch` gets the trimmed text.
export function SearchForm(props: { label: string; onSearch: (text: string) => void }) {
  const [text, setText] = useState('');
  return (
    <form
      class="row"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSearch(text.trim());
      }}
    >
      <Field label={props.label} type="search" value={text} onInput={setText} />
      <button>Search</button>
    </form>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export function when(iso?: string | null): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}
