import type { FormatError } from './task.js';

// A live region present from the first render (screen readers announce later changes of a region
// they already know), empty while there is nothing to say.
export function ErrorText({ error, formatError, id, className }: { error: Error | undefined; formatError: FormatError; id: string; className: string | undefined }) {
  return (
    <p id={id} role="alert" aria-live="assertive" data-part="error" className={className}>
      {error ? formatError(error) : null}
    </p>
  );
}
