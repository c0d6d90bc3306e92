import { Injectable, Logger } from '@nestjs/common';
import type { BrokerMessage } from '../../delivery/broker/broker.js';
import type { SessionData } from '../../kernel/principal.js';
import { hasAdminRole } from '../../kernel/roles.js';
import { fromCel, toCel } from './event-scripts.js';
import type { CompiledSubscription, CompiledTopic } from './event-subscriptions.js';

// Stable reasons in `rejected: [{ topic, reason }]`.
export const REJECT_REASONS = {
  invalidSession: 'InvalidSession',
  roleNotAllowed: 'RoleNotAllowed',
  unknownTopic: 'UnknownTopic',
  loginRequired: 'LoginRequired',
  adminOnly: 'AdminOnly',
  authScriptRejected: 'AuthScriptRejected',
  authScriptFailed: 'AuthScriptFailed',
} as const;
export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];

// Who subscribes: the targeted store and the login (none for an anonymous client).
export interface Subscriber {
  storeId: string;
  session?: SessionData;
}

export interface SubscribeResult {
  topics: string[];
  rejected: { topic: string; reason: RejectReason }[];
}

// One message on its way to many subscribers: its CEL form is built once.
export class MessageContext {
  private cel: unknown;
  constructor(readonly message: BrokerMessage) {}
  get celData(): unknown {
    return (this.cel ??= toCel(this.message.data));
  }
}

const LOG_EVERY_MS = 10_000;

// The one authorization of the event channel, used by Socket.IO and SSE alike: which topics a
// subscriber may have (at subscribe time) and what of each event reaches it (per event).
@Injectable()
export class EventAccessService {
  private readonly logger = new Logger('EventAccess');
  private readonly lastLogged = new Map<string, number>();

  // SPEC order: invalid session rejects all; an absolute role allows all; checkRoles; then per
  // topic the access level and the authScript. Each requested topic lands once in one list.
  authorize(subscriber: Subscriber | 'invalidSession', sub: CompiledSubscription, requested: readonly string[]): SubscribeResult {
    const names = [...new Set(requested)];
    const rejectAll = (reason: RejectReason): SubscribeResult => ({ topics: [], rejected: names.map((topic) => ({ topic, reason })) });
    if (subscriber === 'invalidSession') return rejectAll(REJECT_REASONS.invalidSession);
    const roles = subscriber.session?.roles ?? [];
    const known = names.filter((n) => sub.topics.has(n));
    const unknown = names.filter((n) => !sub.topics.has(n)).map((topic) => ({ topic, reason: REJECT_REASONS.unknownTopic }));
    if (this.isAbsolute(subscriber, sub)) return { topics: known, rejected: unknown };
    if (sub.checkRoles && !roles.some((r) => sub.checkRoles!.has(r))) return rejectAll(REJECT_REASONS.roleNotAllowed);

    const result: SubscribeResult = { topics: [], rejected: unknown };
    for (const name of known) {
      const topic = sub.topics.get(name)!;
      const reason = this.defaultReason(subscriber, topic) ?? this.scriptReason(subscriber, sub, topic);
      if (reason) result.rejected.push({ topic: name, reason });
      else result.topics.push(name);
    }
    return result;
  }

  // What this subscriber receives of one event on one of its topics, or undefined when the
  // event is not for it. A script that throws skips the event for this subscriber only.
  shape(subscriber: Subscriber, sub: CompiledSubscription, topic: CompiledTopic, event: MessageContext): Record<string, unknown> | undefined {
    const data = event.message.data;
    // An absolute role bypasses every filter (default and filterScript); shaping still applies.
    const absolute = this.isAbsolute(subscriber, sub);
    const filterScript = absolute ? undefined : sub.filterScript;
    if (!absolute && topic.accessLevel !== 'accessPublic') {
      // Tenant filter; an event that names no store reaches no tenant's subscriber.
      if (data.storeId !== subscriber.storeId) return undefined;
      if (topic.accessLevel === 'accessPrivate' && !hasAdminRole(subscriber.session?.roles ?? []) && data._owner !== subscriber.session?.userId) return undefined;
    }
    if (!filterScript && !topic.payloadMapping && !topic.excludeFields.length) return data; // shared by all who pass
    try {
      const context = filterScript || topic.payloadMapping ? { ...this.scriptContext(subscriber, topic), data: event.celData } : undefined;
      if (filterScript && filterScript(context!) !== true) return undefined;
      let payload = data;
      if (topic.payloadMapping) {
        const mapped = fromCel(topic.payloadMapping(context!));
        if (!mapped || typeof mapped !== 'object' || Array.isArray(mapped)) throw new Error('payloadMapping did not produce an object');
        payload = mapped as Record<string, unknown>;
      }
      if (topic.excludeFields.length) {
        payload = { ...payload };
        for (const field of topic.excludeFields) delete payload[field];
      }
      return payload;
    } catch (error) {
      this.logThrottled(`${sub.name}/${topic.name}`, error, 'event script failed; event skipped for this subscriber');
      return undefined;
    }
  }

  isAbsolute(subscriber: Subscriber, sub: CompiledSubscription): boolean {
    return (subscriber.session?.roles ?? []).some((r) => sub.absoluteRoles.has(r));
  }

  private defaultReason(subscriber: Subscriber, topic: CompiledTopic): RejectReason | undefined {
    if (topic.accessLevel === 'accessPublic') return undefined;
    if (!subscriber.session) return REJECT_REASONS.loginRequired;
    // Private with an owner field: any user may hold the topic, and receives only what it owns.
    if (topic.accessLevel === 'accessPrivate' && !topic.hasOwnerField && !hasAdminRole(subscriber.session.roles)) return REJECT_REASONS.adminOnly;
    return undefined;
  }

  private scriptReason(subscriber: Subscriber, sub: CompiledSubscription, topic: CompiledTopic): RejectReason | undefined {
    if (!sub.authScript) return undefined;
    try {
      return sub.authScript(this.scriptContext(subscriber, topic)) === true ? undefined : REJECT_REASONS.authScriptRejected;
    } catch (error) {
      this.logThrottled(`${sub.name}/${topic.name}/auth`, error, 'authScript failed; topic rejected');
      return REJECT_REASONS.authScriptFailed;
    }
  }

  // What scripts see of the subscriber: never the token.
  private scriptContext(subscriber: Subscriber, topic: CompiledTopic): Record<string, unknown> {
    const s = subscriber.session;
    const session = s
      ? { userId: s.userId, sessionId: s.sessionId, storeId: subscriber.storeId, roleId: s.roles[0] ?? null, roles: s.roles, email: s.email, fullname: s.fullname, anonymous: false }
      : { userId: null, sessionId: null, storeId: subscriber.storeId, roleId: null, roles: [], email: null, fullname: null, anonymous: true };
    return { session, topicName: topic.name, dataObjectName: topic.dataObjectName };
  }

  private logThrottled(key: string, err: unknown, message: string): void {
    const now = Date.now();
    if ((this.lastLogged.get(key) ?? 0) + LOG_EVERY_MS > now) return;
    this.lastLogged.set(key, now);
    this.logger.warn({ err, where: key }, message);
  }
}
