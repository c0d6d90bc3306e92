// @svc/react's building blocks are written for React and run on preact/compat (vite.config.ts):
// the one attribute they use that Preact's types spell otherwise (`spellcheck`).
import 'preact';

declare module 'preact' {
  interface HTMLAttributes<RefType extends EventTarget = EventTarget> {
    spellCheck?: boolean | undefined;
  }
}
