import { AUDIT_ACTIONS } from '../../kernel/audit.js';
import { API_EVENT_NAMES } from '../events/event-bridge.js';

// What an endpoint may subscribe to: the service's API events (`user-created`, ...), an audit
// action (`audit:user.login.failed`), or `*` for all. `webhook.test` is sent when asked.
export const ALL_TOPICS = '*';
export const TEST_TOPIC = 'webhook.test';
const AUDIT_PREFIX = 'audit:';

export class WebhookTopics {
  private readonly known: ReadonlySet<string>;

  constructor(extensionAuditActions: readonly string[]) {
    this.known = new Set([ALL_TOPICS, ...API_EVENT_NAMES, ...[...Object.keys(AUDIT_ACTIONS), ...extensionAuditActions].map((a) => AUDIT_PREFIX + a)]);
  }

  // The topics that are not known, in their order.
  unknown(topics: readonly string[]): string[] {
    return topics.filter((t) => !this.known.has(t));
  }
}

export function auditTopicOf(action: string): string {
  return AUDIT_PREFIX + action;
}

export function subscribes(topics: readonly string[], topic: string): boolean {
  return topics.includes(topic) || topics.includes(ALL_TOPICS);
}
