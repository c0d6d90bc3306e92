import type { Tx } from '../platform/database/transactions.js';
import type { ContextRequest, RequestContext } from './request-context.js';

// The audit log's port: every feature records security events through it, and the audit
// feature (src/operations/audit/) implements it. Features depend on this file only.

export type AuditActorType = 'user' | 'apiKey' | 'machine' | 'system' | 'anonymous';

export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  roleId?: string | null;
}

export interface AuditTarget {
  type: string;
  id: string | null;
}

// What a feature knows about one event. The request's address, user agent, request id and
// session come from `AuditContext` (the caller passes the request's when it has one).
export interface AuditInput {
  // The store the event belongs to (the root store's id at the SaaS level).
  storeId: string;
  // Dotted, from the catalogue in `AUDIT_ACTIONS` (e.g. `user.login.succeeded`).
  action: AuditAction;
  outcome: 'success' | 'failure';
  // A stable code for failures (`wrong_password`, `unknown_user`, ...); never told to the caller.
  reason?: string | null;
  actor: AuditActor;
  target?: AuditTarget | null;
  // Small, per action, never a secret (no password, hash, code, token or key).
  details?: Record<string, unknown> | null;
}

export interface AuditContext {
  ip?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
  sessionId?: string | null;
}

// Every action the service records, with what it means: the generated reference
// (docs/audit-actions.md) is written from this list.
export const AUDIT_ACTIONS = {
  'user.login.succeeded': 'a password, social, single sign-on, passkey or passwordless login started a session',
  'user.login.failed': 'a login was refused (reason: wrong_password, unknown_user, locked, rate_limited, not_verified, inactive, store_inactive; a passwordless one also wrong_code, expired, attempts_exceeded)',
  'user.login.locked': 'too many failed logins for one username: further attempts are refused for a while',
  'user.logout': 'a user ended its own session',
  'session.ended': 'sessions ended by their user, an administrator, a new password or a deactivation',
  'session.refresh.reused': 'a spent refresh token was used again: its session ended',
  'user.password.changed': 'a user changed its password',
  'user.password.reset': 'a password was reset with a verification code or link',
  'user.verification.completed': 'an email or mobile number was verified',
  'user.2fa.passed': 'a second factor of a login was completed',
  'user.2fa.failed': 'a wrong second-factor code',
  'user.factor.enrolled': 'an app factor (TOTP, passkey) or recovery codes were added',
  'user.factor.removed': 'an app factor was removed, or all of them by an administrator',
  'apikey.created': 'an API key was created',
  'apikey.deleted': 'an API key was deleted',
  'webhook.created': 'a webhook endpoint was created (its URL and topics; never its secret)',
  'webhook.updated': 'a webhook endpoint was changed (the fields changed)',
  'webhook.deleted': 'a webhook endpoint was deleted',
  'webhook.secret.rotated': 'a webhook endpoint has a new signing secret; the previous one signs beside it for a while',
  'webhook.disabled': 'the service disabled a webhook endpoint (reason: gone, it answered 410; failing, it failed for days)',
  'oauth.client.created': 'an OAuth client of the OpenID Connect provider was registered (its client_id, grant types, authentication method and scopes; never its secret)',
  'oauth.client.updated': 'an OAuth client was changed (the fields changed)',
  'oauth.client.deleted': 'an OAuth client was deleted',
  'oauth.client.secret.rotated': 'an OAuth client has a new secret; the previous one stopped at once',
  'oauth.consent.granted': 'a user allowed an application at the OpenID Connect provider\'s consent page (its client_id, the scopes added; the entry\'s session is the sign-in\'s when it just happened)',
  'oauth.consent.revoked': 'a remembered consent was revoked by its user or an administrator: its grant and every token issued under it are gone (its client_id, user and scopes)',
  'machine.token.refused': 'a machine token was refused (replay, block list, bad signature)',
  'user.created': 'a user was created',
  'user.updated': 'a user was changed (the fields, never secret values)',
  'user.deactivated': 'a user was deactivated',
  'user.deleted': 'a user was deleted',
  'user.role.changed': 'a user\'s roles changed',
  'permission.grant.added': 'a permission grant was added',
  'permission.grant.removed': 'a permission grant was removed',
  'group.changed': 'a user group or its membership changed',
  'store.created': 'a store was created',
  'store.updated': 'a store was changed (details.fields: the names of the fields, never their values)',
  'store.deactivated': 'a SaaS administrator deactivated a store: its logins, sessions and API keys stop at once',
  'store.activated': 'a SaaS administrator activated a deactivated store again',
  'user.social.linked': 'a social or single sign-on account was linked to a user',
  'user.remote.login': 'a remote service\'s login was accepted',
} as const;

// Actions extensions add (src/extension.ts): an extension declares them in its definition and
// adds their names here by declaration merging, so `record` type-checks them as ours.
//   declare module '<service>/extension' { interface ExtensionAuditActions { 'ticket.opened': true } }
export interface ExtensionAuditActions {}

export type AuditAction = keyof typeof AUDIT_ACTIONS | keyof ExtensionAuditActions;

// Recording. `record` with a transaction writes the entry in it (no change without its entry,
// no entry without its change); without one (events that write nothing, such as a failed
// login) the entry is queued and written in batches, never slowing the answer, and a graceful
// shutdown writes what is queued.
export abstract class AuditLog {
  // Whether anything is recorded (settings.auditLog.enabled): work done only for an entry can be
  // skipped when not.
  abstract readonly enabled: boolean;
  abstract record(input: AuditInput, context?: AuditContext, tx?: Tx): Promise<void>;
}

// The request's part of an entry: its address, user agent, request id and the caller's session.
export function auditContext(req: ContextRequest, sessionId?: string | null): AuditContext {
  return auditContextOf(req.ctx, sessionId);
}

// The same from the request's context (the request-context middleware reads the address and
// user agent once), for services given the context rather than the request.
export function auditContextOf(ctx: RequestContext, sessionId?: string | null): AuditContext {
  return { ip: ctx.ip, userAgent: ctx.userAgent, requestId: ctx.requestId, sessionId: sessionId ?? ctx.session?.sessionId ?? null };
}

// Who acted, from the caller's session: a user, or an API key acting for its owner.
export function auditActor(session: { principal?: string; userId: string; roles: readonly string[] }): AuditActor {
  return { type: session.principal === 'apiKey' ? 'apiKey' : 'user', id: session.userId, roleId: session.roles[0] ?? null };
}
