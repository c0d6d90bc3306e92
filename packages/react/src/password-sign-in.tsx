import { useId, type FormEvent, type ReactNode } from 'react';
import type { SignInResult } from '@svc/client';
import { ErrorText } from './error-text.js';
import { useClient } from './provider.js';
import { defaultFormatError, useTask, type FormatError } from './task.js';

export interface PasswordSignInProps {
  // The sign-in's answer: signed in, or the next step (a second factor, an enrolment). The
  // session hooks hear of it as well.
  onResult?: (result: SignInResult) => void;
  onError?: (error: Error) => void;
  formatError?: FormatError;
  className?: string;
  errorClassName?: string;
  usernameLabel?: ReactNode;
  passwordLabel?: ReactNode;
  submitLabel?: ReactNode;
  // The form's accessible name (e.g. "Sign in").
  ariaLabel?: string;
}

// A username (or email) and password form that calls client.signIn.
export function PasswordSignIn({
  onResult,
  onError,
  formatError = defaultFormatError,
  className,
  errorClassName,
  usernameLabel = 'Email',
  passwordLabel = 'Password',
  submitLabel = 'Sign in',
  ariaLabel,
}: PasswordSignInProps) {
  const client = useClient();
  const id = useId();
  const task = useTask((username: string, password: string) => client.signIn({ username, password }), onResult, onError);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void task.run(String(form.get('username') ?? '').trim(), String(form.get('password') ?? ''));
  };
  const invalid = task.error !== undefined;
  return (
    <form className={className} onSubmit={submit} aria-busy={task.busy} aria-label={ariaLabel} data-part="password-sign-in">
      <label htmlFor={`${id}-username`}>{usernameLabel}</label>
      <input id={`${id}-username`} name="username" autoComplete="username" required aria-invalid={invalid} aria-describedby={`${id}-error`} />
      <label htmlFor={`${id}-password`}>{passwordLabel}</label>
      <input id={`${id}-password`} name="password" type="password" autoComplete="current-password" required aria-invalid={invalid} aria-describedby={`${id}-error`} />
      <button type="submit" disabled={task.busy}>
        {submitLabel}
      </button>
      <ErrorText id={`${id}-error`} error={task.error} formatError={formatError} className={errorClassName} />
    </form>
  );
}
