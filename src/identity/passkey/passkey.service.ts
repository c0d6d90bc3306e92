import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import type { AuthMethod } from '../../kernel/assurance.js';
import { AppError } from '../../kernel/errors.js';
import { AuditLog, auditActor, type AuditContext } from '../../kernel/audit.js';
import type { SessionData, SessionMeta } from '../../kernel/principal.js';
import { RateLimits } from '../../kernel/rate-limit/rate-limit.js';
import type { Tenant } from '../../kernel/tenant.js';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Transactions, type Tx } from '../../platform/database/transactions.js';
import type { WebAuthnSettings } from '../session/webauthn.settings.js';
import { AuthService, type LoginResult } from '../auth/auth.service.js';
import { SessionService } from '../session/session.service.js';
import { UserService } from '../user/user.service.js';
import type { PasskeyLoginInput, PasskeyRegisterInput } from './passkey.dto.js';
import type { ChallengePurpose, PasskeyEntity } from './passkey.entity.js';
import { PasskeyRepository } from './passkey.repository.js';
import { SessionSection } from '../session/session.settings.js';

export const CHALLENGE_TTL_MS = 5 * 60_000;

// A synced passkey (backed up) lives in software across devices; one bound to its device, in its
// hardware (RFC 8176 `swk`, `hwk`).
function passkeyMethod(backedUp: boolean): AuthMethod {
  return backedUp ? 'swk' : 'hwk';
}

// Passkeys (WebAuthn) through @simplewebauthn/server: enrolment by a logged-in user, and
// sign-in without a password with a discoverable credential. A passkey verified with user
// verification is two factors at once (something held, and a PIN or biometric), so its
// sign-in asks for no second factor.
@Injectable()
export class PasskeyService {
  private readonly logger = new Logger('PasskeyService');

  constructor(
    private readonly passkeys: PasskeyRepository,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly auth: AuthService,
    private readonly limits: RateLimits,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
  ) {}

  async registrationOptions(caller: SessionData) {
    const rp = this.rp();
    const user = await this.users.findById(caller.storeId, caller.userId);
    if (!user) throw new AppError('Unauthorized');
    const existing = await this.passkeys.listForUser(caller.storeId, caller.userId);
    const options = await generateRegistrationOptions({
      rpName: rp.rpName,
      rpID: rp.rpId,
      // The user handle is the user id: no personal data on the authenticator beyond the names.
      userID: new TextEncoder().encode(user.id),
      userName: user.email ?? user.mobile ?? user.id,
      userDisplayName: user.fullname ?? user.email ?? user.mobile ?? '',
      timeout: CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    });
    await this.saveChallenge(caller.storeId, options.challenge, 'register', caller.userId);
    return options;
  }

  // A user's first second factor (no authenticator app either) makes its password, code and
  // provider sign-ins ask for one: its other sessions, begun without, end. The enrolment proved
  // the passkey, so this sign-in counts it; `session` is it as it is now when it was waiting for
  // this enrolment (mfaRequiredForRoles): its earlier tokens said so, and it needs fresh ones.
  async register(caller: SessionData, input: PasskeyRegisterInput, context: AuditContext = {}): Promise<{ passkey: PasskeyEntity; session?: SessionData }> {
    const rp = this.rp();
    const user = await this.users.findById(caller.storeId, caller.userId);
    if (!user) throw new AppError('Unauthorized');
    const firstFactor = !user.totpEnabled && !user.hasPasskey;
    const response = input.response as unknown as RegistrationResponseJSON;
    const challenge = await this.takeChallenge(caller.storeId, response, 'register');
    if (challenge.userId !== caller.userId) throw new AppError('PasskeyChallengeExpired', 'this challenge was given to another user');
    let info;
    try {
      const result = await verifyRegistrationResponse({ response, expectedChallenge: challenge.challenge, expectedOrigin: rp.origins, expectedRPID: rp.rpId, requireUserVerification: true });
      if (!result.verified) throw new Error('not verified');
      info = result.registrationInfo;
    } catch (error) {
      throw new AppError('PasskeyVerificationFailed', (error as Error).message);
    }
    if (await this.passkeys.findByCredentialId(caller.storeId, info.credential.id)) throw new AppError('PasskeyVerificationFailed', 'this passkey is already enrolled');
    const now = this.clock.now();
    // The passkey, the user's flag and the audit entry in one transaction.
    const passkey = await this.transactions.run(async (tx) => {
      const row = await this.passkeys
        .insert(caller.storeId, {
          id: randomUUID(),
          userId: caller.userId,
          credentialId: info.credential.id,
          publicKey: Buffer.from(info.credential.publicKey),
          counter: info.credential.counter,
          transports: info.credential.transports ?? [],
          backedUp: info.credentialBackedUp,
          name: input.name?.trim() || 'Passkey',
          createdAt: now,
          lastUsedAt: null,
        }, tx)
        .catch((error: unknown) => {
          // The unique credential id: enrolled meanwhile, or in another store.
          if ((error as { code?: string }).code === '23505') throw new AppError('PasskeyVerificationFailed', 'this passkey is already enrolled');
          throw error;
        });
      await this.users.setAppFactors(caller.storeId, caller.userId, { hasPasskey: true }, tx);
      await this.recordFactor(caller, context, 'user.factor.enrolled', row.id, tx);
      return row;
    });
    // Cached sessions recompute whether an app factor must still be enrolled.
    if (firstFactor) await this.sessions.end(caller.storeId, { userId: caller.userId, exceptId: caller.sessionId });
    else await this.sessions.forgetCached(caller.storeId, caller.userId);
    const updated = await this.sessions.completeSecondFactor(caller.storeId, caller.sessionId, 'passkey', passkeyMethod(info.credentialBackedUp));
    return { passkey, ...(caller.mfaEnrollmentNeeded && updated && { session: updated }) };
  }

  list(caller: SessionData): Promise<PasskeyEntity[]> {
    this.rp();
    return this.passkeys.listForUser(caller.storeId, caller.userId);
  }

  async rename(caller: SessionData, id: string, name: string): Promise<PasskeyEntity> {
    this.rp();
    await this.passkeys.rename(caller.storeId, caller.userId, id, name.trim());
    const passkey = await this.passkeys.findForUser(caller.storeId, caller.userId, id);
    if (!passkey) throw new AppError('PasskeyNotFound');
    return passkey;
  }

  async delete(caller: SessionData, id: string, context: AuditContext = {}): Promise<void> {
    this.rp();
    const none = await this.transactions.run(async (tx) => {
      if (!(await this.passkeys.delete(caller.storeId, caller.userId, id, tx))) throw new AppError('PasskeyNotFound');
      const left = await this.passkeys.countForUser(caller.storeId, caller.userId, tx);
      if (left === 0) await this.users.setAppFactors(caller.storeId, caller.userId, { hasPasskey: false }, tx);
      await this.recordFactor(caller, context, 'user.factor.removed', id, tx);
      return left === 0;
    });
    if (none) await this.sessions.forgetCached(caller.storeId, caller.userId);
  }

  private recordFactor(caller: SessionData, context: AuditContext, action: 'user.factor.enrolled' | 'user.factor.removed', passkeyId: string, tx: Tx): Promise<void> {
    return this.audit.record({ storeId: caller.storeId, action, outcome: 'success', actor: auditActor(caller), target: { type: 'user', id: caller.userId }, details: { factor: 'passkey', passkeyId } }, { ...context, sessionId: caller.sessionId }, tx);
  }

  // Usernameless: no allowCredentials, the authenticator offers the passkeys it holds for rpId.
  async loginOptions(store: Tenant, meta: SessionMeta) {
    const rp = this.rp();
    if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);
    // Each call stores a challenge: counted like a password login's attempts.
    await this.limits.consume('loginPerIp', meta.ip ?? 'unknown');
    const options = await generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'required', timeout: CHALLENGE_TTL_MS });
    await this.saveChallenge(store.id, options.challenge, 'login', null);
    return options;
  }

  async login(store: Tenant, input: PasskeyLoginInput, meta: SessionMeta): Promise<LoginResult> {
    const rp = this.rp();
    const response = input.response as unknown as AuthenticationResponseJSON;
    // Taken first: a failed attempt uses its challenge up too.
    const challenge = await this.takeChallenge(store.id, response, 'login');
    // Only this store's passkeys: one enrolled in another store is unknown here.
    const passkey = await this.passkeys.findByCredentialId(store.id, response.id);
    if (!passkey) throw new AppError('PasskeyNotFound', 'no passkey with this credential in this store');
    const user = await this.users.findById(store.id, passkey.userId);
    if (!user) throw new AppError('PasskeyNotFound', 'the passkey\'s user is gone');
    const handle = response.response.userHandle;
    if (handle && isoBase64URL.toUTF8String(handle) !== passkey.userId) throw new AppError('PasskeyVerificationFailed', 'the user handle is not the passkey\'s user');

    let info;
    try {
      const result = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge.challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.rpId,
        // Counter 0 here: the library's own counter check would refuse without the log line below.
        credential: { id: passkey.credentialId, publicKey: new Uint8Array(passkey.publicKey), counter: 0, transports: passkey.transports as never },
        requireUserVerification: true,
      });
      if (!result.verified) throw new Error('not verified');
      info = result.authenticationInfo;
    } catch (error) {
      throw new AppError('PasskeyVerificationFailed', (error as Error).message);
    }
    // After the signature: only a genuine assertion with a stale counter is a clone's sign.
    this.assertCounterMoves(passkey, info.newCounter);
    await this.passkeys.markUsed(store.id, passkey.id, { counter: info.newCounter, backedUp: info.credentialBackedUp, lastUsedAt: this.clock.now() });
    // User verification (a PIN or biometric) with the key held: two factors in one.
    return this.auth.loginVerified(store, user, meta, { amr: [passkeyMethod(info.credentialBackedUp), 'mfa'], multiFactor: true });
  }

  // The pending sign-in's passkey factor (a password, code or provider proved the user first):
  // request options naming the user's own passkeys. User verification is preferred, not
  // required: holding the key is the second factor here.
  async secondFactorOptions(session: SessionData) {
    const rp = this.rp();
    this.pendingPasskey(session);
    const passkeys = await this.passkeys.listForUser(session.storeId, session.userId);
    const options = await generateAuthenticationOptions({
      rpID: rp.rpId,
      allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports as never })),
      userVerification: 'preferred',
      timeout: CHALLENGE_TTL_MS,
    });
    await this.saveChallenge(session.storeId, options.challenge, '2fa', session.userId);
    return options;
  }

  // Completes the pending sign-in with one of the user's passkeys: the session as it is now.
  // A refused answer is recorded (user.2fa.failed).
  async secondFactor(session: SessionData, input: PasskeyLoginInput, context: AuditContext = {}): Promise<SessionData> {
    const rp = this.rp();
    const { storeId, userId, sessionId } = this.pendingPasskey(session);
    const response = input.response as unknown as AuthenticationResponseJSON;
    let passkey: PasskeyEntity | null;
    let info;
    try {
      const challenge = await this.takeChallenge(storeId, response, '2fa');
      if (challenge.userId !== userId) throw new AppError('PasskeyChallengeExpired', 'this challenge was given to another user');
      passkey = await this.passkeys.findByCredentialId(storeId, response.id);
      if (!passkey || passkey.userId !== userId) throw new AppError('PasskeyNotFound', 'not one of your passkeys');
      try {
        const result = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge.challenge,
          expectedOrigin: rp.origins,
          expectedRPID: rp.rpId,
          credential: { id: passkey.credentialId, publicKey: new Uint8Array(passkey.publicKey), counter: 0, transports: passkey.transports as never },
          requireUserVerification: false,
        });
        if (!result.verified) throw new Error('not verified');
        info = result.authenticationInfo;
      } catch (error) {
        throw new AppError('PasskeyVerificationFailed', (error as Error).message);
      }
      this.assertCounterMoves(passkey, info.newCounter);
    } catch (error) {
      const reason = error instanceof AppError ? (error.errCode === 'PasskeyVerificationFailed' ? 'wrong_passkey' : error.errCode === 'PasskeyNotFound' ? 'unknown_passkey' : 'challenge_expired') : 'error';
      void this.audit.record({ storeId, action: 'user.2fa.failed', outcome: 'failure', reason, actor: auditActor(session), target: { type: 'session', id: sessionId }, details: { factor: 'passkey' } }, { ...context, sessionId });
      throw error;
    }
    await this.passkeys.markUsed(storeId, passkey.id, { counter: info.newCounter, backedUp: info.credentialBackedUp, lastUsedAt: this.clock.now() });
    const updated = await this.sessions.completeSecondFactor(storeId, sessionId, 'passkey', passkeyMethod(info.credentialBackedUp), (tx) =>
      this.audit.record(
        { storeId, action: 'user.2fa.passed', outcome: 'success', actor: auditActor(session), target: { type: 'session', id: sessionId }, details: { factor: 'passkey', passkeyId: passkey.id } },
        { ...context, sessionId },
        tx,
      ),
    );
    if (!updated) throw new AppError('Unauthorized', 'the session has ended');
    return updated;
  }

  private pendingPasskey(session: SessionData): SessionData {
    if (!session.sessionNeedsPasskey2FA) throw new AppError('SecondFactorNotPending', 'this session has no pending passkey factor');
    return session;
  }

  toLoginResponse(result: LoginResult) {
    return this.auth.toResponse(result);
  }

  // For the app-factor summary and an administrator's reset of a user's factors.
  count(storeId: string, userId: string): Promise<number> {
    return this.passkeys.countForUser(storeId, userId);
  }

  // Within the caller's transaction (an administrator's reset of every factor): the caller sets
  // the user's flags and ends its sessions.
  async deleteAllForUser(storeId: string, userId: string, tx: Tx): Promise<void> {
    await this.passkeys.deleteAllForUser(storeId, userId, tx);
  }

  private rp(): WebAuthnSettings {
    const rp = this.config.section(SessionSection).webauthn;
    if (!rp) throw new AppError('WebAuthnNotConfigured', 'passkeys are off (settings webauthn)');
    return rp;
  }

  private async saveChallenge(storeId: string, challenge: string, purpose: ChallengePurpose, userId: string | null): Promise<void> {
    const now = this.clock.now();
    await this.passkeys.insertChallenge(storeId, { challenge, purpose, userId, expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS) }, now);
  }

  // The challenge the authenticator signed, taken (deleted) so it serves once.
  private async takeChallenge(storeId: string, response: { response: { clientDataJSON: string } }, purpose: ChallengePurpose) {
    let signed: string;
    try {
      signed = decodeClientDataJSON(response.response.clientDataJSON).challenge;
    } catch {
      throw new AppError('PasskeyVerificationFailed', 'clientDataJSON is not readable');
    }
    if (typeof signed !== 'string' || signed.length > 100) throw new AppError('PasskeyVerificationFailed', 'clientDataJSON has no challenge');
    const row = await this.passkeys.takeChallenge(storeId, signed, purpose);
    if (!row || row.expiresAt <= this.clock.now()) throw new AppError('PasskeyChallengeExpired');
    return row;
  }

  // A counter that does not move forward means a cloned authenticator: refused and logged.
  // Authenticators that keep no counter (synced passkeys) always say 0.
  private assertCounterMoves(passkey: PasskeyEntity, counter: number): void {
    if ((counter > 0 || passkey.counter > 0) && counter <= passkey.counter) {
      this.logger.warn({ storeId: passkey.storeId, userId: passkey.userId, passkeyId: passkey.id, stored: passkey.counter, received: counter }, 'passkey signature counter did not increase: possible cloned authenticator');
      throw new AppError('PasskeyVerificationFailed', 'the signature counter did not increase');
    }
  }

  private async setHasPasskey(storeId: string, userId: string, hasPasskey: boolean): Promise<void> {
    await this.users.setAppFactors(storeId, userId, { hasPasskey });
    // Cached sessions recompute whether an app factor must still be enrolled.
    await this.sessions.forgetCached(storeId, userId);
  }
}
