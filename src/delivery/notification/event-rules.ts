import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { parse } from '@marcbachmann/cel-js';
import { PinoLogger } from 'nestjs-pino';
import { Broker } from '../broker/broker.js';
import { resolveTopicAlias } from '../broker/topics.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { nameUuid } from '../../platform/crypto/name-uuid.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import type { EventRuleSetting } from './notification.settings.js';
import { ExtensionCatalogue } from '../../kernel/extensions.js';
import { BUILT_IN_OBJECTS } from '../broker/data-objects.js';
import { NotificationService } from './notification.service.js';
import { BrokerSection } from '../broker/broker.settings.js';
import { NotificationSection } from './notification.settings.js';
import { ApiDoneAliases } from '../broker/api-done.js';

type Expression = (context: Record<string, unknown>) => unknown;

interface CompiledRule {
  rule: EventRuleSetting;
  // The broker topic the rule's `eventName` resolves to.
  topic: string;
  // The data object of the service's own event (`user` for user.created), as settings spell it.
  object?: string;
  recipient: Expression;
  contextVars: [string, Expression][];
  when?: Expression;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Event rules: a broker event becomes a notification. `eventName` is a broker topic or an
// event-channel alias (`user.created` → `<svc>-user-created`, `dbEvent:user:created`,
// `<apiName>:done`, any other text literally), so events published by backend teams through
// EventPublisher, or by another process on the broker, trigger rules too. The replicas consume
// as one group (`<svc>:notification-rules`): one of them handles each event. Recipient and
// variables are CEL over `event` (the payload), compiled at boot: no eval, always terminating.
// On an event of the service's own objects, `event.<object>Id` is the object's id as well
// (`event.userId` on user.created), as rules have always read it.
@Injectable()
export class EventRules implements OnModuleInit, OnModuleDestroy {
  private readonly rules: CompiledRule[] = [];
  private readonly problems: string[] = [];
  private readonly group: string;
  private readonly stops: (() => Promise<void>)[] = [];

  constructor(
    private readonly notifications: NotificationService,
    private readonly broker: Broker,
    private readonly logger: PinoLogger,
    config: AppConfig,
    private readonly checks: BootChecks,
    extensions: ExtensionCatalogue,
    aliases: ApiDoneAliases,
  ) {
    logger.setContext(EventRules.name);
    const service = config.env.SERVICE_CODENAME;
    this.group = `${service}:notification-rules`;
    const problems = this.problems;
    const objects = new Map([...BUILT_IN_OBJECTS, ...extensions.dataObjects, ...config.section(BrokerSection).dataObjectAccess].map((o) => [o.name.toLowerCase(), o.name]));
    const where = (rule: EventRuleSetting) => `settings.notifications.eventRules: ${rule.eventName} → ${rule.template}`;
    const compile = (rule: EventRuleSetting, what: string, source: string): Expression => {
      try {
        return parse(source) as Expression;
      } catch (error) {
        problems.push(`${where(rule)}: ${what} does not compile: ${(error as Error).message.split('\n')[0]}`);
        return () => undefined;
      }
    };
    for (const rule of config.section(NotificationSection).notifications.eventRules) {
      aliases.declare(where(rule), rule.eventName);
      const resolved = resolveTopicAlias(rule.eventName, service, new Set(objects.keys()));
      if ('error' in resolved) problems.push(`${where(rule)}: ${resolved.error}`);
      const topic = 'error' in resolved ? rule.eventName : resolved.topic;
      this.rules.push({
        rule,
        topic,
        object: objects.get(('error' in resolved ? undefined : resolved.object) ?? ownObjectOf(topic, service, objects) ?? ''),
        recipient: compile(rule, 'recipient', rule.recipient),
        ...(rule.when !== undefined && { when: compile(rule, 'when', rule.when) }),
        contextVars: Object.entries(rule.contextVars).map(([name, source]) => [name, compile(rule, `contextVars.${name}`, String(source))]),
      });
    }
  }

  // Reported at init, with every module's settings problems (BootChecks): a boot that will stop
  // consumes nothing.
  async onModuleInit(): Promise<void> {
    this.checks.report(this.problems);
    if (this.problems.length) return;
    for (const topic of new Set(this.rules.filter((r) => r.rule.enabled !== false).map((r) => r.topic))) {
      this.stops.push(await this.broker.consume(topic, this.group, (message) => this.apply(topic, message.data, message.id)));
    }
  }

  // The events in hand are handled before the broker closes.
  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.stops.splice(0).map((stop) => stop()));
  }

  // Every rule for the topic; one rule failing does not stop the others. `messageId`: the
  // message's id (a domain event's own, the same each time the outbox delivers it again): each
  // rule's notification is named after it, so an event delivered twice notifies once.
  async apply(topic: string, payload: Record<string, unknown>, messageId?: string): Promise<void> {
    for (const [index, { rule, object, recipient, contextVars, when }] of this.rules.entries()) {
      if (rule.enabled === false || this.rules[index].topic !== topic) continue;
      try {
        const context = { event: withObjectId(payload, object) };
        if (when && plain(when(context)) !== true) continue;
        const to = plain(recipient(context));
        if (typeof to !== 'string' || !to) throw new Error('recipient is not a string');
        const storeId = payload.storeId;
        if (typeof storeId !== 'string') throw new Error('the event has no storeId');
        await this.notifications.send({
          ...(messageId && { id: nameUuid(`${messageId}\n${index}\n${rule.eventName}\n${rule.channel}\n${rule.template}`) }),
          storeId,
          channel: rule.channel,
          template: rule.template,
          ...(UUID.test(to) ? { userId: to } : { recipient: to }),
          contextVars: Object.fromEntries(contextVars.map(([name, expression]) => [name, plain(expression(context))])),
        });
      } catch (err) {
        this.logger.error({ err, eventName: rule.eventName, topic, template: rule.template }, 'event rule failed');
      }
    }
  }
}

// `<svc>-user-created` or `<svc>-dbevent-user-created` written literally: the object is `user`.
function ownObjectOf(topic: string, service: string, objects: ReadonlyMap<string, string>): string | undefined {
  if (!topic.startsWith(`${service}-`)) return undefined;
  const parts = topic.slice(service.length + 1).split('-');
  const object = parts.length === 3 && parts[0] === 'dbevent' ? parts[1] : parts.length === 2 ? parts[0] : undefined;
  return object && objects.has(object) ? object : undefined;
}

// `event.userId` on a user event (`event.apiKeyId` on an API key's, ...): the object's `id`
// under its object name, unless the payload has that field already.
function withObjectId(payload: Record<string, unknown>, object: string | undefined): Record<string, unknown> {
  if (!object || payload.id === undefined) return payload;
  const field = `${object.charAt(0).toLowerCase()}${object.slice(1)}Id`;
  return field in payload ? payload : { ...payload, [field]: payload.id };
}

// CEL integers are BigInt; JSON (and templates) want numbers.
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}
