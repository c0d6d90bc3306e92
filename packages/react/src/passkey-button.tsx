import { useId, type ReactNode } from 'react';
import type { ServiceClient, SignInResult } from '@svc/client';
import { ErrorText } from './error-text.js';
import { useClient } from './provider.js';
import { defaultFormatError, useTask, type FormatError } from './task.js';

export type PasskeyEnrolled = Awaited<ReturnType<ServiceClient['passkey']['register']>>;

interface CommonProps {
  onError?: (error: Error) => void;
  formatError?: FormatError;
  className?: string;
  errorClassName?: string;
  // The button's text (default per mode).
  children?: ReactNode;
}

export type PasskeyButtonProps = CommonProps &
  (
    | { mode: 'signIn' | 'secondFactor'; onResult?: (result: SignInResult) => void }
    // `name`: how the passkey is listed to the user (the service names it otherwise).
    | { mode: 'register'; name?: string; onResult?: (passkey: PasskeyEnrolled) => void }
  );

const LABELS = { signIn: 'Sign in with a passkey', register: 'Add a passkey', secondFactor: 'Use a passkey' } as const;

// A passkey ceremony in the browser: a sign-in without a password (client.passkey.signIn), a new
// passkey for the signed-in user (client.passkey.register), or a pending sign-in's second factor
// (client.passkey.secondFactor).
export function PasskeyButton(props: PasskeyButtonProps) {
  const client = useClient();
  const id = useId();
  const { mode, onError, formatError = defaultFormatError, className, errorClassName, children } = props;
  const work = (): Promise<SignInResult | PasskeyEnrolled> =>
    props.mode === 'register' ? client.passkey.register(props.name) : props.mode === 'signIn' ? client.passkey.signIn() : client.passkey.secondFactor();
  const done = (result: SignInResult | PasskeyEnrolled) => {
    if (props.mode === 'register') props.onResult?.(result as PasskeyEnrolled);
    else props.onResult?.(result as SignInResult);
  };
  const task = useTask(work, done, onError);
  return (
    <>
      <button type="button" className={className} onClick={() => void task.run()} disabled={task.busy} aria-busy={task.busy} aria-describedby={`${id}-error`} data-part="passkey-button" data-mode={mode}>
        {children ?? LABELS[mode]}
      </button>
      <ErrorText id={`${id}-error`} error={task.error} formatError={formatError} className={errorClassName} />
    </>
  );
}
