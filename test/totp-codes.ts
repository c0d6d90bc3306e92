import { Secret, TOTP } from 'otpauth';
import type { ManualClock } from '../src/platform/clock/clock.js';

// Authenticator-app codes as an app computes them, on the service's clock.
export const TOTP_STEP_MS = 30_000;

export function codeAt(secret: string, clock: ManualClock, steps = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() + steps * TOTP_STEP_MS });
}

// A 6-digit code that is none of the ones valid now (drift included).
export function wrongCode(secret: string, clock: ManualClock): string {
  const valid = new Set([-1, 0, 1].map((s) => codeAt(secret, clock, s)));
  let n = Number(codeAt(secret, clock));
  let code: string;
  do code = String((n = (n + 1) % 1_000_000)).padStart(6, '0');
  while (valid.has(code));
  return code;
}
