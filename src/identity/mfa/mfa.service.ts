import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { AppError } from '../../kernel/errors.js';
import type { SessionData } from '../../kernel/principal.js';
import { RateLimits, type RateLimitName } from '../../kernel/rate-limit/rate-limit.js';
import { levelRoles } from '../../kernel/roles.js';
import type { Tenant } from '../../kernel/tenant.js';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { ConfigError } from '../../platform/config/env.js';
import { KeyEncryption } from '../../platform/crypto/key-encryption.js';
import { afterCommit, Transactions, type Tx } from '../../platform/database/transactions.js';
import { SessionService } from '../session/session.service.js';
import { PasswordHasher } from '../user/password.js';
import { UserService } from '../user/user.service.js';
import { MfaRepository } from './mfa.repository.js';
import { PasskeyService } from '../passkey/passkey.service.js';
import { AuditLog, auditActor, type AuditAction, type AuditContext, type AuditInput } from '../../kernel/audit.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';
import { SessionSection } from '../session/session.settings.js';

// RFC 6238 as authenticator apps expect it: SHA-1, 6 digits, 30 s; one step of drift each way.
const PERIOD = 30;
const DIGITS = 6;
const DRIFT_STEPS = 1;
// RFC 4226 recommends 160 bits.
const SECRET_BYTES = 20;
const RECOVERY_CODES = 10;
// 12 characters of Crockford's base32 (no i, l, o, u): 60 bits each.
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RECOVERY_LENGTH = 12;

export interface MfaFactors {
  totp: boolean;
  passkeys: number;
  recoveryCodesLeft: number;
}

// Authenticator apps (TOTP) and recovery codes: enrolment, the pending sign-in's factor, and
// removal. Every code is accepted by one conditional statement (replay refused on any replica);
// wrong codes are counted before they are checked, so concurrent guesses get no more than the
// limit.
@Injectable()
export class MfaService implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('MfaService');
  private readonly encryption: KeyEncryption;
  // Recovery codes are HMACs keyed with these: the current secret, and during a rotation the
  // earlier ones too (a hash cannot be sealed again).
  private readonly peppers: string[];

  constructor(
    private readonly factors: MfaRepository,
    private readonly users: UserService,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly limits: RateLimits,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly checks: BootChecks,
    private readonly passkeys: PasskeyService,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
  ) {
    const { KEY_ENCRYPTION_SECRET, KEY_ENCRYPTION_SECRET_PREVIOUS } = config.env;
    this.encryption = new KeyEncryption(KEY_ENCRYPTION_SECRET, { salt: 'svc-totp-secrets', what: 'the authenticator-app secrets' }, KEY_ENCRYPTION_SECRET_PREVIOUS);
    // With KEY_ENCRYPTION_SECRET a stolen table alone does not let recovery codes be tried offline.
    this.peppers = [KEY_ENCRYPTION_SECRET ?? 'recovery-codes', ...(KEY_ENCRYPTION_SECRET_PREVIOUS?.split(',') ?? [])];
  }

  // During a KEY_ENCRYPTION_SECRET rotation, every app secret the previous secret sealed is sealed
  // again under the current one, a page at a time after the boot (a use seals its own at once).
  // Conditional updates: replicas doing it together, or a setup meanwhile, lose nothing.
  onApplicationBootstrap(): void {
    if (!this.encryption.rotating) return;
    this.resealing = this.resealAll().catch((err: unknown) => this.logger.error({ err }, 'could not seal the authenticator-app secrets again under the current KEY_ENCRYPTION_SECRET'));
  }

  // The boot's pass (tests wait for it); a shutdown stops it after the page under way.
  resealing: Promise<void> = Promise.resolve();
  private stopping = false;

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await this.resealing;
  }

  private async resealAll(): Promise<void> {
    let resealed = 0;
    let unreadable = 0;
    for (let after = '00000000-0000-0000-0000-000000000000'; ; ) {
      if (this.stopping) return;
      const page = await this.factors.pageSecrets(after, 500);
      if (!page.length) break;
      after = page[page.length - 1].userId;
      for (const row of page) {
        if (!this.encryption.stale(row.secret)) {
          if (!this.opens(row.secret)) unreadable++;
          continue;
        }
        if (await this.factors.reseal(row.storeId, row.userId, row.secret, this.encryption.seal(this.encryption.open(row.secret)))) resealed++;
      }
    }
    const what = unreadable ? 'some authenticator-app secrets open with neither KEY_ENCRYPTION_SECRET nor KEY_ENCRYPTION_SECRET_PREVIOUS' : 'every authenticator-app secret is sealed under the current KEY_ENCRYPTION_SECRET';
    (unreadable ? this.logger.error.bind(this.logger) : this.logger.log.bind(this.logger))({ resealed, unreadable }, what);
  }

  private opens(sealed: string): boolean {
    try {
      this.encryption.open(sealed);
      return true;
    } catch {
      return false;
    }
  }

  // mfaRequiredForRoles names roles that exist: a typo would silently require nothing.
  onModuleInit(): void {
    const s = { ...this.config.section(TenancySection), ...this.config.section(SessionSection) };
    const known = new Set([
      ...[true, false].flatMap((atRoot) => Object.values(levelRoles(s.tenancy, atRoot))),
      ...s.customRoles.map((r) => String(r.value)),
    ]);
    const unknown = s.mfaRequiredForRoles.filter((r) => !known.has(r));
    this.checks.report(unknown.map((r) => `settings.mfaRequiredForRoles: no role "${r}" (built-in: ${[...known].join(', ')})`));
  }

  async factorsOf(session: SessionData): Promise<MfaFactors> {
    const { storeId, userId } = session;
    const [row, passkeys, recoveryCodesLeft] = await Promise.all([
      this.factors.findTotp(storeId, userId),
      this.passkeys.count(storeId, userId),
      this.factors.countRecoveryCodes(storeId, userId),
    ]);
    return { totp: !!row?.confirmedAt, passkeys, recoveryCodesLeft };
  }

  // A new secret, pending until a code of it confirms the setup. Shown this once (and again by a
  // new setup, which replaces it while none is confirmed).
  async setup(session: SessionData, store: Tenant): Promise<{ secret: string; otpauthUrl: string; qrCodeSvg: string }> {
    const secret = new Secret({ size: SECRET_BYTES });
    const started = await this.factors.startTotp(session.storeId, session.userId, this.encryption.seal(secret.base32), this.clock.now());
    if (!started) throw new AppError('TotpAlreadyEnabled', 'an authenticator app is already enabled');
    const totp = this.totp(secret, store, session);
    const otpauthUrl = totp.toString();
    const qrCodeSvg = await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    return { secret: secret.base32, otpauthUrl, qrCodeSvg };
  }

  // The first code of the app enables it; the recovery codes come with it. The account asks a
  // second factor from now on: its other sessions, begun with one, end. The code proved the app,
  // so this sign-in counts it (`otp`); `session` is it as it is now when it was waiting for this
  // enrolment (mfaRequiredForRoles): its earlier tokens said so, and it needs fresh ones.
  async confirm(session: SessionData, code: string, context: AuditContext = {}): Promise<{ recoveryCodes: string[]; session?: SessionData }> {
    const { storeId, userId } = session;
    const row = await this.factors.findTotp(storeId, userId);
    if (!row) throw new AppError('TotpNotEnabled', 'start with POST /auth-api/mfa/totp/setup');
    if (row.confirmedAt) throw new AppError('TotpAlreadyEnabled', 'the authenticator app is already enabled');
    await this.attempt([['totpPerUser', userId]], undefined, () => this.acceptCode(storeId, userId, row.secret, code, false));
    // The user's flag, its recovery codes and the audit entry in one transaction.
    const recoveryCodes = await this.transactions.run(async (tx) => {
      await this.users.setAppFactors(storeId, userId, { totpEnabled: true }, tx);
      const fresh = await this.newRecoveryCodes(storeId, userId, tx);
      await this.recordFactor(session, context, 'user.factor.enrolled', 'totp', {}, tx);
      return fresh;
    });
    await this.sessions.end(storeId, { userId, exceptId: session.sessionId });
    const updated = await this.sessions.completeSecondFactor(storeId, session.sessionId, 'totp', 'otp');
    return { recoveryCodes, ...(session.mfaEnrollmentNeeded && updated && { session: updated }) };
  }

  // The pending sign-in's app factor, by a current code.
  async verify(session: SessionData, code: string, context: AuditContext = {}): Promise<SessionData> {
    const { storeId, userId } = this.pending(session);
    await this.signInFactor(session, 'totp', context, (ended) =>
      this.attempt(this.signInKeys(session), { session, ended }, async () => {
        const row = await this.confirmedTotp(storeId, userId);
        return this.acceptCode(storeId, userId, row.secret, code, true);
      }),
    );
    return this.complete(session, 'totp', context);
  }

  // The pending sign-in's app factor, by a recovery code (used up).
  async recover(session: SessionData, code: string, context: AuditContext = {}): Promise<SessionData> {
    const { storeId, userId } = this.pending(session);
    await this.signInFactor(session, 'recoveryCode', context, (ended) => this.attempt(this.signInKeys(session), { session, ended }, () => this.factors.useRecoveryCode(storeId, userId, this.recoveryCodeHashes(storeId, userId, code))));
    return this.complete(session, 'recoveryCode', context);
  }

  // New recovery codes, the old ones dead, against a current code of the app.
  async regenerateRecoveryCodes(session: SessionData, code: string, context: AuditContext = {}): Promise<string[]> {
    const { storeId, userId } = session;
    await this.attempt([['totpPerUser', userId]], undefined, async () => {
      const row = await this.confirmedTotp(storeId, userId);
      return this.acceptCode(storeId, userId, row.secret, code, true);
    });
    return this.transactions.run(async (tx) => {
      const codes = await this.newRecoveryCodes(storeId, userId, tx);
      await this.recordFactor(session, context, 'user.factor.enrolled', 'recoveryCodes', {}, tx);
      return codes;
    });
  }

  // The user's own removal of its app: a current code, or its password.
  async disable(session: SessionData, input: { code?: string; password?: string }, context: AuditContext = {}): Promise<void> {
    const { storeId, userId } = session;
    if (!input.code && !input.password) throw new AppError('MfaCredentialMissing', 'send code (a current one) or password');
    await this.attempt([['totpPerUser', userId]], undefined, async () => {
      const row = await this.confirmedTotp(storeId, userId);
      if (input.code) return this.acceptCode(storeId, userId, row.secret, input.code, true);
      const user = await this.users.findById(storeId, userId);
      return !!user && (await this.passwords.verify(input.password!, user.passwordHash));
    });
    await this.transactions.run(async (tx) => {
      await this.removeTotp(storeId, userId, tx);
      await this.recordFactor(session, context, 'user.factor.removed', 'totp', { by: input.code ? 'code' : 'password' }, tx);
    });
    await this.sessions.forgetCached(storeId, userId);
  }

  // An administrator's reset: the app, the recovery codes and the passkeys go, and every
  // session of the user ends (the next login enrols again where the role requires it).
  // `inTx`: written in the factors' transaction (the reset's audit entry and event).
  async reset(storeId: string, userId: string, inTx: (tx: Tx) => Promise<unknown>): Promise<number> {
    let ended = 0;
    await this.transactions.run(async (tx) => {
      await this.removeTotp(storeId, userId, tx);
      await this.passkeys.deleteAllForUser(storeId, userId, tx);
      await this.users.setAppFactors(storeId, userId, { totpEnabled: false, hasPasskey: false }, tx);
      // Once committed, the sessions end before what `inTx` emits is delivered.
      afterCommit(tx, async () => {
        ended = await this.sessions.end(storeId, { userId });
      });
      await inTx(tx);
    });
    return ended;
  }

  private async removeTotp(storeId: string, userId: string, tx?: Tx): Promise<void> {
    await this.factors.deleteTotp(storeId, userId, tx);
    await this.factors.deleteRecoveryCodes(storeId, userId, tx);
    await this.users.setAppFactors(storeId, userId, { totpEnabled: false }, tx);
  }

  private pending(session: SessionData): SessionData {
    if (!session.sessionNeedsTotp2FA) throw new AppError('SecondFactorNotPending', 'this session has no pending authenticator-app factor');
    return session;
  }

  // A pending sign-in's wrong codes count for it and for its user (over all its sign-ins).
  private signInKeys(session: SessionData): [RateLimitName, string][] {
    return [
      ['totpPerSession', session.sessionId],
      ['totpPerUser', session.userId],
    ];
  }

  private async complete(session: SessionData, factor: 'totp' | 'recoveryCode', context: AuditContext): Promise<SessionData> {
    // A recovery code is a one-time password too (RFC 8176 `otp`).
    const updated = await this.sessions.completeSecondFactor(session.storeId, session.sessionId, 'totp', 'otp', (tx) =>
      this.audit.record({ storeId: session.storeId, action: 'user.2fa.passed', outcome: 'success', actor: auditActor(session), target: { type: 'session', id: session.sessionId }, details: { factor } }, { ...context, sessionId: session.sessionId }, tx),
    );
    if (!updated) throw new AppError('Unauthorized', 'the session has ended');
    return updated;
  }

  // A pending sign-in's code: a refused one is recorded with why (never the code). The wrong code
  // that ends the sign-in is recorded with the end, in its transaction (`ended`, handed to
  // `attempt`); other refusals change nothing and are queued.
  private async signInFactor(session: SessionData, factor: 'totp' | 'recoveryCode', context: AuditContext, check: (ended: (tx: Tx) => Promise<void>) => Promise<void>): Promise<void> {
    const entry = (reason: string, ended: boolean): AuditInput => ({
      storeId: session.storeId,
      action: 'user.2fa.failed',
      outcome: 'failure',
      reason,
      actor: auditActor(session),
      target: { type: 'session', id: session.sessionId },
      details: { factor, ...(ended && { signInEnded: true }) },
    });
    const where = { ...context, sessionId: session.sessionId };
    let recorded = false;
    try {
      await check(async (tx) => {
        await this.audit.record(entry('wrong_code', true), where, tx);
        recorded = true;
      });
    } catch (error) {
      if (recorded) throw error;
      const code = error instanceof AppError ? error.errCode : undefined;
      const reason = code === 'TotpCodeInvalid' ? 'wrong_code' : code === 'TotpAttemptsExceeded' ? 'rate_limited' : code === 'TotpNotEnabled' ? 'not_enabled' : 'error';
      const ended = code === 'TotpCodeInvalid' && error instanceof AppError && /sign-in has ended/.test(error.message);
      void this.audit.record(entry(reason, ended), where);
      throw error;
    }
  }

  private recordFactor(session: SessionData, context: AuditContext, action: AuditAction, factor: string, extra: Record<string, unknown>, tx: Tx): Promise<void> {
    return this.audit.record({ storeId: session.storeId, action, outcome: 'success', actor: auditActor(session), target: { type: 'user', id: session.userId }, details: { factor, ...extra } }, { ...context, sessionId: session.sessionId }, tx);
  }

  private async confirmedTotp(storeId: string, userId: string) {
    const row = await this.factors.findTotp(storeId, userId);
    if (!row?.confirmedAt) throw new AppError('TotpNotEnabled', 'no authenticator app is enabled');
    return row;
  }

  // Checks a code only after a point of every limit is reserved: of any number of concurrent
  // wrong codes at most the limit are evaluated, on every replica (the limits are in Redis when
  // configured). A right code gives its points back and clears the user's count; the wrong code
  // that uses up a pending sign-in's last point ends the sign-in.
  // `signIn`: the pending sign-in the code is for, and what is written with its end (its entry).
  private async attempt(keys: [RateLimitName, string][], signIn: { session: SessionData; ended: (tx: Tx) => Promise<void> } | undefined, check: () => Promise<boolean>): Promise<void> {
    const giveBack: (() => Promise<void>)[] = [];
    try {
      for (const [name, key] of keys) giveBack.push(await this.limits.reserve(name, key));
    } catch (error) {
      await Promise.all(giveBack.map((g) => g()));
      throw tooMany(error);
    }
    let ok: boolean;
    try {
      ok = await check();
    } catch (error) {
      // Not evaluated (no factor, the database unreachable): not a guess.
      await Promise.all(giveBack.map((g) => g()));
      throw error;
    }
    if (ok) {
      await Promise.all(keys.map(([name, key]) => this.limits.reset(name, key)));
      return;
    }
    if (signIn && (await this.limits.exhausted('totpPerSession', signIn.session.sessionId))) {
      await this.sessions.end(signIn.session.storeId, { id: signIn.session.sessionId }, (_count, tx) => signIn.ended(tx));
      throw new AppError('TotpCodeInvalid', 'the code is not valid; too many wrong codes: the sign-in has ended, log in again');
    }
    throw new AppError('TotpCodeInvalid', 'the code is not valid');
  }

  // Accepts a code of the current step or one step either side, once: the step it belongs to is
  // recorded by a conditional UPDATE, so the same code (or an older one) is refused afterwards.
  private async acceptCode(storeId: string, userId: string, sealed: string, code: string, confirmed: boolean): Promise<boolean> {
    const token = code.trim();
    const timestamp = this.clock.now().getTime();
    const totp = new TOTP({ secret: Secret.fromBase32(this.openSecret(sealed)), digits: DIGITS, period: PERIOD, algorithm: 'SHA1' });
    const delta = totp.validate({ token, timestamp, window: DRIFT_STEPS });
    if (delta === null) return false;
    const step = totp.counter({ timestamp }) + delta;
    const accepted = await this.factors.acceptStep(storeId, userId, sealed, step, confirmed, this.clock.now());
    if (accepted && this.encryption.stale(sealed)) await this.factors.reseal(storeId, userId, sealed, this.encryption.seal(this.encryption.open(sealed)));
    return accepted;
  }

  // The app's secret, or 503 when the configured secrets do not open it (KEY_ENCRYPTION_SECRET
  // changed without KEY_ENCRYPTION_SECRET_PREVIOUS): the operator's fault, not a wrong code.
  private openSecret(sealed: string): string {
    try {
      return this.encryption.open(sealed);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.logger.error({ problems: error.problems }, 'an authenticator-app secret cannot be opened: restore KEY_ENCRYPTION_SECRET, or set the one it replaced as KEY_ENCRYPTION_SECRET_PREVIOUS');
      throw new AppError('TotpSecretUnreadable', 'authenticator apps cannot be checked now; the operator has been told: try again later');
    }
  }

  private async newRecoveryCodes(storeId: string, userId: string, tx: Tx): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODES }, () => recoveryCode());
    const rows = codes.map((c) => ({ id: randomUUID(), codeHash: this.recoveryCodeHashes(storeId, userId, c)[0] }));
    await this.factors.replaceRecoveryCodes(storeId, userId, rows, this.clock.now(), tx);
    return codes;
  }

  // Bound to the store and the user; dashes, spaces and case do not matter. The current secret's
  // hash first (new codes are stored with it), then the previous one's during a rotation.
  private recoveryCodeHashes(storeId: string, userId: string, code: string): string[] {
    const normalized = code.replace(/[\s-]/g, '').toLowerCase();
    return this.peppers.map((pepper) => createHmac('sha256', pepper).update(`${storeId}\n${userId}\n${normalized}`).digest('hex'));
  }

  private totp(secret: Secret, store: Tenant, session: SessionData): TOTP {
    const issuer = store.fullname || store.name || store.codename;
    const label = session.email ?? session.mobile ?? session.fullname ?? session.userId;
    return new TOTP({ issuer, label, secret, digits: DIGITS, period: PERIOD, algorithm: 'SHA1' });
  }
}

// 12 characters, shown as three groups of four: 60 bits.
function recoveryCode(): string {
  const bytes = randomBytes(RECOVERY_LENGTH);
  const chars = Array.from(bytes, (b) => RECOVERY_ALPHABET[b & 31]);
  return [0, 4, 8].map((i) => chars.slice(i, i + 4).join('')).join('-');
}

// The limits' 429 under the feature's code, with its Retry-After.
function tooMany(error: unknown): unknown {
  if (!(error instanceof AppError) || error.errCode !== 'TooManyRequests') return error;
  return new AppError('TotpAttemptsExceeded', 'too many wrong codes: a pending sign-in has ended (log in again); otherwise retry later', error.headers);
}
