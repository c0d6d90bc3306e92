import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';

// How a building block shows a failure: the error's message by default (a ServiceError's is the
// service's message code, e.g. `errMsg_InvalidCredentials`), or what `formatError` makes of it.
export type FormatError = (error: Error) => ReactNode;

export const defaultFormatError: FormatError = (error) => error.message;

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

// One call at a time from a form or button: `busy` while it runs, its error kept until the next.
export function useTask<A extends unknown[], R>(work: (...args: A) => Promise<R>, done: ((result: R) => void) | undefined, failed: ((error: Error) => void) | undefined) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>(undefined);
  const mounted = useRef(true);
  const running = useRef(false);
  useEffect(() => {
    mounted.current = true;
    return () => void (mounted.current = false);
  }, []);
  const run = useCallback(
    async (...args: A) => {
      if (running.current) return;
      running.current = true;
      setBusy(true);
      setError(undefined);
      try {
        const result = await work(...args);
        // The result may unmount this component (the session changed): done() is still told.
        if (mounted.current) setBusy(false);
        done?.(result);
      } catch (cause) {
        const e = asError(cause);
        if (mounted.current) {
          setBusy(false);
          setError(e);
        }
        failed?.(e);
      } finally {
        running.current = false;
      }
    },
    [work, done, failed],
  );
  return { busy, error, run, clearError: () => setError(undefined) };
}
