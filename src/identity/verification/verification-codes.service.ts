import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { invalidCode, MAX_ATTEMPTS, whyNotSpent } from './flows.js';
import { VerificationRepository, type CodeLookup } from './verification.repository.js';

// What other features (passwordless sign-in) use of the verification codes: the same table,
// rules and errors as the verification flows. A code comes from a CSPRNG, is kept only as a keyed
// hash bound to store, purpose and subject (the address), serves once, survives 5 wrong tries
// (reserved atomically: of any number of concurrent tries at most 5 are evaluated), and expires.

export interface CodeRequest {
  // The flow's name, stored with the code (e.g. `passwordless-login-by-email`).
  purpose: string;
  // The address as stored (lower-case email, E.164 mobile).
  subject: string;
  userId: string | null;
  // false: the secrets are made and answered alike, but their row keeps hashes nothing matches
  // (an address that must not sign in), so the caller's answer and timing do not tell.
  live: boolean;
  // A 6-digit code, a link token (256 bits), or both: using either spends the row.
  code: boolean;
  link: boolean;
  expireSeconds: number;
  resendSeconds: number;
}

export interface IssuedSecrets {
  codeIndex: number;
  sentAt: Date;
  expiresAt: Date;
  code?: string;
  token?: string;
}

export interface SpentCode {
  purpose: string;
  subject: string;
  // Null: the row was issued live for an address without an account (a sign-up).
  userId: string | null;
}

@Injectable()
export class VerificationCodes {
  private readonly pepper: string;

  constructor(
    private readonly codes: VerificationRepository,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    // The verification flows' key: a stolen table alone does not give the codes back.
    this.pepper = config.env.KEY_ENCRYPTION_SECRET ?? 'verification-codes';
  }

  // A new code and/or link for the subject, replacing its last one; 429 VerificationResendTooSoon
  // (Retry-After) within `resendSeconds` of the last.
  async issue(storeId: string, req: CodeRequest): Promise<IssuedSecrets> {
    const code = req.code ? String(randomInt(0, 1_000_000)).padStart(6, '0') : undefined;
    const token = req.link ? randomBytes(32).toString('base64url') : undefined;
    const dead = () => randomBytes(32).toString('hex');
    const now = this.clock.now();
    const issued = await this.codes.issue(storeId, {
      purpose: req.purpose,
      subject: req.subject,
      userId: req.userId,
      sessionId: null,
      // Without a code the row still needs a hash: one nothing matches.
      codeHash: req.live && code ? this.codeHash(storeId, req.purpose, req.subject, code) : dead(),
      linkHash: token ? (req.live ? this.linkHash(storeId, token) : dead()) : null,
      now,
      expiresAt: new Date(now.getTime() + req.expireSeconds * 1000),
      resendBefore: new Date(now.getTime() - req.resendSeconds * 1000),
    });
    if (!issued) {
      const sentAt = (await this.codes.lastSent(storeId, req.purpose, req.subject)) ?? now;
      const seconds = Math.max(1, Math.ceil((new Date(sentAt).getTime() + req.resendSeconds * 1000 - now.getTime()) / 1000));
      throw new AppError('VerificationResendTooSoon', `a new code can be requested in ${seconds} seconds`, { 'Retry-After': String(seconds) });
    }
    return { codeIndex: issued.codeIndex, sentAt: new Date(issued.sentAt), expiresAt: new Date(issued.expiresAt), code, token };
  }

  // Uses up the subject's code: one attempt counted, the row spent when it matches. 403
  // VerificationCodeInvalid (wrong, used, never sent, or a dead row), 403 VerificationCodeExpired,
  // 429 VerificationAttemptsExceeded.
  async spendCode(storeId: string, purpose: string, subject: string, code: string): Promise<SpentCode> {
    return this.spend(storeId, purpose, { subject }, this.codeHash(storeId, purpose, subject, code));
  }

  // Uses up the row a link token names, among the given purposes (a link does not name its flow).
  async spendLink(storeId: string, purposes: readonly string[], token: string): Promise<SpentCode> {
    const linkHash = this.linkHash(storeId, token);
    return this.spend(storeId, purposes, { linkHash }, linkHash);
  }

  private async spend(storeId: string, purpose: string | readonly string[], lookup: CodeLookup, hash: string): Promise<SpentCode> {
    const now = this.clock.now();
    const consumed = await this.codes.consume(storeId, purpose, lookup, hash, now, MAX_ATTEMPTS);
    if (!consumed) throw whyNotSpent(await this.codes.find(storeId, purpose, lookup), now);
    if (!consumed.ok) throw invalidCode();
    return { purpose: consumed.purpose, subject: consumed.subject, userId: consumed.userId };
  }

  // Bound to store, purpose and subject: a code is worth nothing elsewhere.
  private codeHash(storeId: string, purpose: string, subject: string, code: string): string {
    return createHmac('sha256', this.pepper).update(`${storeId}\n${purpose}\n${subject}\n${code}`).digest('hex');
  }

  // Bound to the store; the row it finds names the purpose and the subject.
  private linkHash(storeId: string, token: string): string {
    return createHmac('sha256', this.pepper).update(`${storeId}\nlink-token\n${token}`).digest('hex');
  }
}
