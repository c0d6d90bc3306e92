import { AppError } from '../../kernel/errors.js';
import type { ChannelName } from '../../delivery/notification/notification.settings.js';
import type { VerificationFlow } from './verification.settings.js';

export interface FlowSpec {
  // The identifier the flow proves or uses, and the channel that carries the code.
  identifier: 'email' | 'mobile';
  channel: Extract<ChannelName, 'email' | 'sms'>;
  kind: 'verify' | 'reset' | 'secondFactor';
  // Client path of a link: `{frontendUrl}/{linkPath}/{token}`.
  linkPath: string;
}

export const FLOWS: Record<VerificationFlow, FlowSpec> = {
  'email-verification': { identifier: 'email', channel: 'email', kind: 'verify', linkPath: 'emailVerification' },
  'mobile-verification': { identifier: 'mobile', channel: 'sms', kind: 'verify', linkPath: 'mobileVerification' },
  'password-reset-by-email': { identifier: 'email', channel: 'email', kind: 'reset', linkPath: 'passwordResetByEmail' },
  'password-reset-by-mobile': { identifier: 'mobile', channel: 'sms', kind: 'reset', linkPath: 'passwordResetByMobile' },
  'email-2factor-verification': { identifier: 'email', channel: 'email', kind: 'secondFactor', linkPath: 'email2FactorVerification' },
  'mobile-2factor-verification': { identifier: 'mobile', channel: 'sms', kind: 'secondFactor', linkPath: 'mobile2FactorVerification' },
};

// Wrong submissions a code survives; the next evaluation is refused and the code is dead.
export const MAX_ATTEMPTS = 5;

export function invalidCode(): AppError {
  return new AppError('VerificationCodeInvalid', 'the code is not valid');
}

// Why a code was not evaluated, from its row: dead after too many attempts, expired, or none
// (never sent, used already, or a link that does not exist).
export function whyNotSpent(row: { consumedAt: Date | null; attempts: number; expiresAt: Date } | null, now: Date): AppError {
  if (!row || row.consumedAt) return invalidCode();
  if (row.attempts >= MAX_ATTEMPTS) return new AppError('VerificationAttemptsExceeded', 'too many wrong codes: request a new one');
  if (row.expiresAt <= now) return new AppError('VerificationCodeExpired', 'the code has expired: request a new one');
  return invalidCode();
}
