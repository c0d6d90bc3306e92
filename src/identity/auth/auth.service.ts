import { createHmac, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import bcrypt from 'bcrypt';
import type { AuthMethod } from '../../kernel/assurance.js';
import { AuditLog, type AuditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { Tx } from '../../platform/database/transactions.js';
import { RateLimits } from '../../kernel/rate-limit/rate-limit.js';
import { SessionService } from '../session/session.service.js';
import type { PendingFactors, SessionData, SessionMeta } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { PasswordHasher } from '../user/password.js';
import type { UserEntity } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { VerificationGate } from '../verification/verification.gate.js';
import type { LoginTokens } from '../token/index.js';
import { LoginTokenService } from '../token/login-tokens.service.js';
import type { LoginInput } from './auth.dto.js';
import { RateLimitSection } from '../../kernel/rate-limit/rate-limit.settings.js';

export interface LoginResult {
  session: SessionData;
  tokens: LoginTokens;
  // A password login whose password a new one could not be today (settings passwordPolicy).
  passwordChangeRecommended?: boolean;
}

@Injectable()
export class AuthService {
  // Compared against when the user does not exist, so both answers take a bcrypt's time.
  private dummyHash?: Promise<string>;
  // Keys the hash of a username tried at a failed login in the audit log: never the username.
  private readonly pepper: string;

  constructor(
    private readonly users: UserService,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly tokens: LoginTokenService,
    private readonly limits: RateLimits,
    private readonly config: AppConfig,
    private readonly verification: VerificationGate,
    private readonly audit: AuditLog,
  ) {
    this.pepper = config.env.KEY_ENCRYPTION_SECRET ?? 'audit-identifiers';
  }

  // Every refusal after the input's shape is recorded (user.login.failed with its reason); the
  // caller's answer is the same as without the audit log.
  async login(store: Tenant, input: LoginInput, meta: SessionMeta, context: AuditContext = {}): Promise<LoginResult> {
    const username = input.username ?? input.email;
    if (!username || !input.password) throw new AppError('MissingParameters', 'username and password are required');
    let user: UserEntity | null = null;
    let pending: PendingFactors | undefined;
    let reason = 'store_inactive';
    // This failure took the username's last attempt: the lockout starts with it.
    let lockoutStarts = false;
    try {
      if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);

      reason = 'unavailable';
      this.passwords.assertCapacity();
      reason = 'rate_limited';
      await this.limits.consume('loginPerIp', meta.ip ?? 'unknown');
      // Per user however the username is written: "+1 415 555 2671" and "+14155552671" are one counter.
      const attemptsKey = `${store.id}:${this.users.loginIdentifier(username)?.value ?? username.trim().toLowerCase()}`;
      user = await this.users.findByLoginIdentifier(store.id, username);
      this.dummyHash ??= bcrypt.hash(randomBytes(16).toString('hex'), this.config.env.BCRYPT_COST);
      const hash = user?.passwordHash ?? (await this.dummyHash);

      // The attempt is reserved before the hash, atomically: concurrent guesses cannot all slip in
      // between a read of the counter and its increment.
      reason = 'locked';
      const attemptsLeft = await this.limits.consume('loginPerUsername', attemptsKey);
      let valid: boolean;
      reason = 'unavailable';
      try {
        valid = await this.passwords.verify(input.password, hash);
      } catch (error) {
        await this.limits.release('loginPerUsername', attemptsKey); // not evaluated (503): not a guess
        throw error;
      }
      reason = user ? 'wrong_password' : 'unknown_user';
      lockoutStarts = attemptsLeft === 0;
      if (!user || !valid) throw new AppError('InvalidCredentials', 'invalid username or password');
      lockoutStarts = false;
      // Only after the password: these answers tell the account exists. The right password is not
      // a failure: its attempt is given back, and a login clears the earlier failures too.
      reason = user.isActive ? 'not_verified' : 'inactive';
      try {
        pending = this.assertMayLogIn(user);
      } catch (error) {
        await this.limits.release('loginPerUsername', attemptsKey);
        throw error;
      }
      await this.limits.reset('loginPerUsername', attemptsKey);
    } catch (error) {
      // A server fault (503) is not a refused login.
      if (reason !== 'unavailable' && error instanceof AppError) {
        this.recordLoginFailure(store, username, user?.id ?? null, reason, context);
        // Once per lockout, not on each refused attempt during it (those are failed, reason locked).
        if (lockoutStarts) {
          const identifierHash = this.identifierHash(store, username);
          const target = user ? { type: 'user', id: user.id } : null;
          const { points, durationSeconds } = this.config.section(RateLimitSection).rateLimits.loginPerUsername;
          void this.audit.record(
            { storeId: store.id, action: 'user.login.locked', outcome: 'failure', reason: 'too_many_failures', actor: { type: 'anonymous', id: null }, target, details: { identifierHash, points, durationSeconds } },
            context,
          );
        }
      }
      throw error;
    }
    const result = await this.startSession(store, user!, meta, pending!, ['pwd'], 'password', context);
    // Only now, after the password matched: the strength check is CPU on the event loop.
    if (await this.users.passwordChangeRecommended(input.password, store, user!)) result.passwordChangeRecommended = true;
    return result;
  }

  // A user already proven by other means (a social provider, single sign-on, a code or link
  // sent to it, a passkey): the same checks and the same session as a password login. `amr`
  // names the proof (kernel/assurance.ts).
  // `multiFactor`: the proof was itself multi-factor (a passkey with user verification), so no
  // second factor is asked after it.
  // `method` names the proof in the audit log (a single sign-on session carries `ssoUserId`).
  async loginVerified(
    store: Tenant,
    user: UserEntity,
    meta: SessionMeta,
    opts: { amr: AuthMethod[]; multiFactor?: boolean; method?: 'social' | 'sso' | 'passkey' | 'passwordless'; context?: AuditContext },
  ): Promise<LoginResult> {
    if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);
    const pending = this.assertMayLogIn(user);
    const method = opts.method ?? (opts.multiFactor ? 'passkey' : meta.ssoUserId ? 'sso' : 'social');
    const none: PendingFactors = { email2FA: false, mobile2FA: false, totp2FA: false, passkey2FA: false };
    return this.startSession(store, user, meta, opts.multiFactor ? none : pending, opts.amr, method, opts.context ?? { ip: meta.ip, userAgent: meta.userAgent });
  }

  // A refused login (user.login.failed): the username tried is kept only as a keyed hash.
  // Other ways of signing in (passwordless) record theirs here too, with their own reasons
  // (null username: a sign-in link names no address).
  recordLoginFailure(store: Tenant, username: string | null, userId: string | null, reason: string, context: AuditContext): void {
    void this.audit.record(
      {
        storeId: store.id,
        action: 'user.login.failed',
        outcome: 'failure',
        reason,
        actor: { type: 'anonymous', id: null },
        target: userId ? { type: 'user', id: userId } : null,
        details: username === null ? {} : { identifierHash: this.identifierHash(store, username) },
      },
      context,
    );
  }

  private identifierHash(store: Tenant, username: string): string {
    return createHmac('sha256', this.pepper).update(`${store.id}\n${username.trim().toLowerCase()}`).digest('hex');
  }

  // The login's answer: the spec's session object with its tokens, and with refresh tokens on
  // the refresh token and when the access token expires.
  toResponse(result: LoginResult) {
    const answer = this.tokens.answer(result.session, result.tokens);
    return result.passwordChangeRecommended ? { ...answer, passwordChangeRecommended: true } : answer;
  }

  // Verification the settings require (403), and the second factors the session must complete.
  private assertMayLogIn(user: UserEntity): PendingFactors {
    if (!user.isActive) throw new AppError('UserInactive', 'this account is deactivated');
    return this.verification.checkLogin(user);
  }

  // The session cap applies in sessions.create, for every kind of login. The session and the
  // sign-in's audit entry are written in one transaction; `newDevice`: none of the user's live
  // sessions had its user agent (the shipped, disabled notification rule emails the user then).
  private async startSession(store: Tenant, user: UserEntity, meta: SessionMeta, pending: PendingFactors, amr: AuthMethod[], method: string, context: AuditContext): Promise<LoginResult> {
    // With the log off, no transaction and no new-device lookup.
    const recorded = !this.audit.enabled
      ? undefined
      : ({ id, newDevice }: { id: string; newDevice: boolean }, tx: Tx) =>
          this.audit.record(
            { storeId: store.id, action: 'user.login.succeeded', outcome: 'success', actor: { type: 'user', id: user.id, roleId: user.roles[0] ?? null }, target: { type: 'user', id: user.id }, details: { method, newDevice } },
            { ...context, sessionId: id },
            tx,
          );
    const session = await this.sessions.create(user, meta, pending, amr, recorded);
    return { session, tokens: await this.tokens.forNewSession(session) };
  }
}
