import { useId, useState, type FormEvent, type ReactNode } from 'react';
import type { SignInResult } from '@svc/client';
import { ErrorText } from './error-text.js';
import { useClient } from './provider.js';
import { defaultFormatError, useTask, type FormatError } from './task.js';

export interface TotpStepProps {
  // The completed step's answer (signed in, or another step still pending).
  onResult?: (result: SignInResult) => void;
  onError?: (error: Error) => void;
  formatError?: FormatError;
  // false: no recovery-code toggle (default true).
  allowRecoveryCode?: boolean;
  className?: string;
  errorClassName?: string;
  codeLabel?: ReactNode;
  recoveryCodeLabel?: ReactNode;
  submitLabel?: ReactNode;
  useRecoveryCodeLabel?: ReactNode;
  useCodeLabel?: ReactNode;
}

// The authenticator-app step of a pending sign-in (client.secondFactor.totp), or one of the
// recovery codes given at enrolment (client.secondFactor.recoveryCode).
export function TotpStep({
  onResult,
  onError,
  formatError = defaultFormatError,
  allowRecoveryCode = true,
  className,
  errorClassName,
  codeLabel = 'Code from your authenticator app',
  recoveryCodeLabel = 'Recovery code',
  submitLabel = 'Verify',
  useRecoveryCodeLabel = 'Use a recovery code instead',
  useCodeLabel = 'Use your authenticator app instead',
}: TotpStepProps) {
  const client = useClient();
  const id = useId();
  const [recovery, setRecovery] = useState(false);
  const task = useTask((code: string, byRecovery: boolean) => (byRecovery ? client.secondFactor.recoveryCode(code) : client.secondFactor.totp(code)), onResult, onError);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget).get('code') ?? '').replace(/\s+/g, '');
    void task.run(code, recovery);
  };
  const toggle = () => {
    setRecovery((r) => !r);
    task.clearError();
  };
  const invalid = task.error !== undefined;
  return (
    <form className={className} onSubmit={submit} aria-busy={task.busy} data-part="totp-step">
      <label htmlFor={`${id}-code`}>{recovery ? recoveryCodeLabel : codeLabel}</label>
      {recovery ? (
        <input key="recovery" id={`${id}-code`} name="code" autoComplete="off" autoCapitalize="off" spellCheck={false} required autoFocus aria-invalid={invalid} aria-describedby={`${id}-error`} />
      ) : (
        <input key="totp" id={`${id}-code`} name="code" inputMode="numeric" autoComplete="one-time-code" required autoFocus aria-invalid={invalid} aria-describedby={`${id}-error`} />
      )}
      <button type="submit" disabled={task.busy}>
        {submitLabel}
      </button>
      {allowRecoveryCode ? (
        <button type="button" onClick={toggle} aria-pressed={recovery} data-part="toggle">
          {recovery ? useCodeLabel : useRecoveryCodeLabel}
        </button>
      ) : null}
      <ErrorText id={`${id}-error`} error={task.error} formatError={formatError} className={errorClassName} />
    </form>
  );
}
