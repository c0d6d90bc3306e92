import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../platform/clock/clock.js';
import { EvenTiming } from '../../platform/clock/even-timing.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { VERIFICATION_FLOWS, type VerificationFlow, type VerificationFlowSetting } from './verification.settings.js';
import { NotificationService } from '../../delivery/notification/notification.service.js';
import { SessionService } from '../session/session.service.js';
import type { SessionData } from '../../kernel/principal.js';
import type { RequestContext } from '../../kernel/request-context.js';
import { AuditLog, auditContextOf, type AuditInput } from '../../kernel/audit.js';
import { afterCommit, type Tx } from '../../platform/database/transactions.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import type { UserEntity } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { FLOWS, invalidCode, MAX_ATTEMPTS, whyNotSpent, type FlowSpec } from './flows.js';
import { linkBase } from './frontend-url.js';
import { PASSWORD_CHANGED_TEMPLATE, VERIFICATION_TEMPLATES } from './verification-templates.js';
import { toStartAnswer, type CompleteAnswer, type CompleteVerificationInput, type StartAnswer, type StartVerificationInput, type VerificationAddressInput } from './verification.dto.js';
import { VerificationRepository, type CodeLookup } from './verification.repository.js';
import { VerificationSection } from './verification.settings.js';

const SECOND_FACTORS = { 'email-2factor-verification': 'email', 'mobile-2factor-verification': 'mobile' } as const;
// Codes expired for longer than this are deleted (every hour), unknown addresses' ones included.
const KEEP_EXPIRED_MS = 86_400_000;
const PURGE_INTERVAL_MS = 3_600_000;

@Injectable()
export class VerificationService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  // How long handing a code to the notification module takes per channel, smoothed: a start for
  // an unknown identifier waits as long, so the answer's timing does not tell whether the
  // account exists.
  private readonly sending = new EvenTiming<FlowSpec['channel']>();
  private purger?: NodeJS.Timeout;
  private readonly pepper: string;

  constructor(
    private readonly codes: VerificationRepository,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly notifications: NotificationService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly events: DomainEvents,
    private readonly checks: BootChecks,
    private readonly audit: AuditLog,
  ) {
    // With KEY_ENCRYPTION_SECRET a stolen table alone does not give the codes back.
    this.pepper = config.env.KEY_ENCRYPTION_SECRET ?? 'verification-codes';
  }

  // Shipped templates first, then every setting a flow depends on: a flow that cannot work
  // stops the boot, named (with every other module's problems, BootChecks).
  onModuleInit(): void {
    this.notifications.addDefaultTemplates(VERIFICATION_TEMPLATES);
    const s = this.config.section(VerificationSection);
    const v = s.verification;
    const problems: string[] = [];
    if (v.verificationMode === 'testMode' && this.config.env.NODE_ENV === 'production') {
      problems.push('settings.verification.verificationMode: testMode returns codes in answers and is refused in production');
    }
    const required: [keyof typeof s, VerificationFlow][] = [
      ['emailVerificationRequiredForLogin', 'email-verification'],
      ['mobileVerificationRequiredForLogin', 'mobile-verification'],
      ['email2FARequiredForLogin', 'email-2factor-verification'],
      ['mobile2FARequiredForLogin', 'mobile-2factor-verification'],
    ];
    for (const [setting, flow] of required) {
      if (s[setting] && !v.flows[flow].enabled) problems.push(`settings.${setting}: needs settings.verification.flows.${flow}.enabled`);
    }
    for (const flow of VERIFICATION_FLOWS) {
      const f = v.flows[flow];
      if (!f.enabled) continue;
      const spec = FLOWS[flow];
      const path = `settings.verification.flows.${flow}`;
      if (this.users.presence[spec.identifier] === 'absent') problems.push(`${path}: users have no ${spec.identifier} (see primaryLoginIdentifier, secondaryIdentifierPresence)`);
      if (v.verificationMode === 'liveMode' && !this.notifications.hasChannel(spec.channel)) problems.push(`${path}: liveMode needs the notification channel ${spec.channel}`);
      if (!this.notifications.hasTemplate(f.verificationTemplate, spec.channel)) problems.push(`${path}.verificationTemplate: no ${spec.channel} template ${f.verificationTemplate}`);
    }
    this.checks.report(problems);
  }

  onApplicationBootstrap(): void {
    this.purger = setInterval(() => void this.codes.purgeExpired(new Date(this.clock.now().getTime() - KEEP_EXPIRED_MS)).catch(() => undefined), PURGE_INTERVAL_MS);
    this.purger.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purger);
  }

  // A new code (or link) for the identifier, or for the caller's session for a second factor.
  // Unknown, inactive and already verified identifiers get the same answer, timing included,
  // with a code that can never work; nothing is sent to them.
  async start(ctx: RequestContext, flowName: string, input: StartVerificationInput, acceptLanguage?: string): Promise<StartAnswer> {
    const { flow, spec, setting } = this.flow(flowName);
    const storeId = ctx.store!.id;
    // Refused before anything is stored or sent, whatever the address (and whether the flow sends a link).
    const frontendUrl = linkBase(this.config.section(VerificationSection).verification, input.frontendUrl);
    let subject: string;
    let user: UserEntity | null;
    let sessionId: string | null = null;
    if (spec.kind === 'secondFactor') {
      const session = this.pendingSession(ctx, flow);
      subject = sessionId = session.sessionId;
      user = await this.users.findById(storeId, session.userId);
    } else {
      subject = this.subject(spec, input);
      const found = await this.users.findByIdentifier(storeId, spec.identifier, subject);
      const done = spec.kind === 'verify' && found && (spec.identifier === 'email' ? found.emailVerified : found.mobileVerified);
      user = found?.isActive && !done ? found : null;
    }

    const secret = setting.verificationType === 'byLink' ? randomBytes(32).toString('base64url') : String(randomInt(0, 1_000_000)).padStart(6, '0');
    const now = this.clock.now();
    const issued = await this.codes.issue(storeId, {
      purpose: flow,
      subject,
      userId: user?.id ?? null,
      sessionId,
      codeHash: user ? this.hash(storeId, flow, setting, subject, secret) : randomBytes(32).toString('hex'),
      now,
      expiresAt: new Date(now.getTime() + setting.expireTimeWindow * 1000),
      resendBefore: new Date(now.getTime() - setting.resendTimeWindow * 1000),
    });
    if (!issued) throw await this.resendTooSoon(storeId, flow, subject, setting, now);

    if (user) await this.sending.work(spec.channel, () => this.deliver(storeId, spec, setting, user, secret, frontendUrl, acceptLanguage));
    else await this.sending.wait(spec.channel);
    const testMode = this.config.section(VerificationSection).verification.verificationMode === 'testMode';
    return toStartAnswer(issued, setting.expireTimeWindow, setting.verificationType, testMode ? secret : undefined);
  }

  // Uses the code up and applies the flow's effect: the identifier verified, the new password
  // set (every session ended, the user told), or the session's second factor done.
  async complete(ctx: RequestContext, flowName: string, input: CompleteVerificationInput, acceptLanguage?: string): Promise<CompleteAnswer | SessionData> {
    const { flow, spec, setting } = this.flow(flowName);
    const storeId = ctx.store!.id;
    // Before the code is spent: a refused password leaves the code usable. Only the words the
    // caller sent count here (the identifier of a code, none for a link): the account's own
    // names must not be probed by someone without the code. The whole check, with them, runs
    // when the password is set.
    if (spec.kind === 'reset') {
      if (input.password === undefined) throw new AppError('ValidationFailed', 'password is required');
      const known = setting.verificationType === 'byLink' ? undefined : { [spec.identifier]: this.subject(spec, input) };
      await this.users.checkNewPassword(input.password, ctx.store!, known);
    }
    const session = spec.kind === 'secondFactor' ? this.pendingSession(ctx, flow) : undefined;
    const byLink = setting.verificationType === 'byLink';
    let lookup: CodeLookup;
    let codeHash: string;
    if (byLink) {
      // A link carries only its token: 256 random bits, found by their hash.
      codeHash = this.hash(storeId, flow, setting, '', input.secretCode);
      lookup = { codeHash };
    } else {
      const subject = session ? session.sessionId : this.subject(spec, input);
      codeHash = this.hash(storeId, flow, setting, subject, input.secretCode);
      lookup = { subject };
    }
    const now = this.clock.now();
    const context = auditContextOf(ctx);
    const factor = SECOND_FACTORS[flow as keyof typeof SECOND_FACTORS];
    const { consumed, user } = await this.spend(storeId, flow, spec, lookup, codeHash, now, session).catch((error: unknown) => {
      // A second factor's wrong code is recorded; a code of the other flows proves no login.
      if (session) void this.audit.record({ ...secondFactorEntry(session, factor, false), reason: failureReason(error) }, context);
      throw error;
    });

    if (session) {
      const updated = await this.sessions.completeSecondFactor(storeId, session.sessionId, factor, factor === 'email' ? 'email' : 'sms', (tx) => this.audit.record(secondFactorEntry(session, factor, true), context, tx));
      if (!updated) throw new AppError('Unauthorized', 'the session has ended');
      return updated;
    }
    const verified = spec.identifier === 'email' ? { emailVerified: true } : { mobileVerified: true };
    const by = { type: 'user' as const, id: user.id, roleId: user.roles[0] ?? null };
    const target = { type: 'user', id: user.id };
    // Written with the change, in its transaction. A reset proves the identifier too: the
    // verification is recorded either way. The user changed (verified, or a new password):
    // `user.updated`, delivered once a reset has ended the user's sessions.
    const recorded = async (_user: unknown, tx: Tx) => {
      if (spec.kind === 'reset') await this.audit.record({ storeId, action: 'user.password.reset', outcome: 'success', actor: by, target, details: { flow, identifier: spec.identifier } }, context, tx);
      await this.audit.record({ storeId, action: 'user.verification.completed', outcome: 'success', actor: by, target, details: { flow, identifier: spec.identifier } }, context, tx);
      if (spec.kind === 'reset') afterCommit(tx, () => this.sessions.end(storeId, { userId: user.id }));
      await this.events.emit('user.updated', { userId: user.id, storeId }, tx);
    };
    if (spec.kind === 'reset') {
      // Receiving the code proved the identifier too.
      await this.users.update(storeId, user.id, { ...verified, password: { value: input.password!, user, store: ctx.store! } }, recorded);
      if (this.notifications.hasChannel(spec.channel)) {
        await this.notifications.send({ storeId, channel: spec.channel, template: PASSWORD_CHANGED_TEMPLATE, userId: user.id, acceptLanguage: acceptLanguage });
      }
    } else {
      await this.users.update(storeId, user.id, verified, recorded);
    }
    return { status: 'OK', isVerified: true, [spec.identifier]: consumed.subject };
  }

  // Uses the code up: the code's row and its user, or the error the caller gets.
  private async spend(storeId: string, flow: VerificationFlow, spec: FlowSpec, lookup: CodeLookup, codeHash: string, now: Date, session: SessionData | undefined) {
    const consumed = await this.codes.consume(storeId, flow, lookup, codeHash, now, MAX_ATTEMPTS);
    if (!consumed) throw whyNotSpent(await this.codes.find(storeId, flow, lookup), now);
    if (!consumed.ok || !consumed.userId || (session && consumed.sessionId !== session.sessionId)) throw invalidCode();
    const user = await this.users.findById(storeId, consumed.userId);
    // The identifier may have changed since the code was sent: the code proved the old one.
    const current = spec.kind === 'secondFactor' ? consumed.subject : user?.[spec.identifier];
    if (!user?.isActive || current !== consumed.subject) throw invalidCode();
    return { consumed, user };
  }

  private flow(name: string): { flow: VerificationFlow; spec: FlowSpec; setting: VerificationFlowSetting } {
    if (!(VERIFICATION_FLOWS as readonly string[]).includes(name)) throw new AppError('RouteNotFound', `no verification flow ${name}`);
    const flow = name as VerificationFlow;
    const setting = this.config.section(VerificationSection).verification.flows[flow];
    if (!setting.enabled) throw new AppError('VerificationFlowDisabled', `${flow} is not enabled`);
    return { flow, spec: FLOWS[flow], setting };
  }

  private subject(spec: FlowSpec, input: VerificationAddressInput): string {
    const value = input[spec.identifier];
    if (!value) throw new AppError('ValidationFailed', `${spec.identifier} is required`);
    return this.users.normalizeIdentifier(spec.identifier, value);
  }

  private pendingSession(ctx: RequestContext, flow: VerificationFlow): SessionData {
    const session = ctx.session;
    if (!session) throw new AppError('Unauthorized', 'a second factor needs the session of the login');
    const pending = flow === 'email-2factor-verification' ? session.sessionNeedsEmail2FA : session.sessionNeedsMobile2FA;
    if (!pending) throw new AppError('SecondFactorNotPending', `this session has no pending ${SECOND_FACTORS[flow as keyof typeof SECOND_FACTORS]} second factor`);
    return session;
  }

  // Bound to store, flow and subject (identifier or session): a code is worth nothing elsewhere.
  private hash(storeId: string, flow: VerificationFlow, setting: VerificationFlowSetting, subject: string, secret: string): string {
    const bound = setting.verificationType === 'byLink' ? `${storeId}\n${flow}\nlink\n${secret}` : `${storeId}\n${flow}\n${subject}\n${secret}`;
    return createHmac('sha256', this.pepper).update(bound).digest('hex');
  }

  private async deliver(storeId: string, spec: FlowSpec, setting: VerificationFlowSetting, user: UserEntity, secret: string, frontendUrl: string, acceptLanguage?: string): Promise<void> {
    // testMode without the channel: the answer carries the code.
    if (!this.notifications.hasChannel(spec.channel)) return;
    const link = `${frontendUrl}/${spec.linkPath}/${secret}`;
    await this.notifications.send({
      storeId,
      channel: spec.channel,
      template: setting.verificationTemplate,
      userId: user.id,
      contextVars: { expireMinutes: Math.ceil(setting.expireTimeWindow / 60) },
      // Kept only until delivered; never in a queue job or a log.
      secretVars: setting.verificationType === 'byLink' ? { link } : { code: secret },
      acceptLanguage,
    });
  }

  private async resendTooSoon(storeId: string, flow: VerificationFlow, subject: string, setting: VerificationFlowSetting, now: Date): Promise<AppError> {
    const sentAt = (await this.codes.lastSent(storeId, flow, subject)) ?? now;
    const seconds = Math.max(1, Math.ceil((sentAt.getTime() + setting.resendTimeWindow * 1000 - now.getTime()) / 1000));
    return new AppError('VerificationResendTooSoon', `a new code can be requested in ${seconds} seconds`, { 'Retry-After': String(seconds) });
  }
}

function secondFactorEntry(session: SessionData, factor: string, passed: boolean): AuditInput {
  return { storeId: session.storeId, action: passed ? 'user.2fa.passed' : 'user.2fa.failed', outcome: passed ? 'success' : 'failure', actor: { type: 'user', id: session.userId, roleId: session.roles[0] ?? null }, target: { type: 'session', id: session.sessionId }, details: { factor } };
}

function failureReason(error: unknown): string {
  const code = error instanceof AppError ? error.errCode : undefined;
  if (code === 'VerificationAttemptsExceeded') return 'attempts_exceeded';
  if (code === 'VerificationCodeExpired') return 'expired';
  if (code === 'VerificationCodeInvalid') return 'wrong_code';
  return 'error';
}
