import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

// Small building blocks shared by the screens.

// An error sentence, announced to screen readers.
export function ErrorText({ error }: { error?: string }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

export function Notice({ text }: { text?: string }) {
  return text ? <p class="notice" role="status">{text}</p> : null;
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

export function Select(props: { label: string; value: string; options: { value: string; label: string }[]; onChange: (value: string) => void }) {
  const id = useRef(`s${Math.random().toString(36).slice(2, 8)}`).current;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map((o) => (
          <option value={o.value} key={o.value}>
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

// Loads data for a screen; `reload` loads it again.
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: string; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (e: Error) => live && setState({ error: e.message, loading: false }),
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
// (named for screen readers only), `caption` names it for them.
export function Table(props: { columns: string[]; actions?: boolean; caption?: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
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
        <tbody>{props.children}</tbody>
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
