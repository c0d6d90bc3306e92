import { Injectable, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { parse } from '@marcbachmann/cel-js';
import { PinoLogger } from 'nestjs-pino';
import { AppConfig } from '../config/app-config.js';
import { ConfigError } from '../config/env.js';
import type { EventRuleSetting } from '../config/notification-settings.js';
import { NotificationService } from './notification.service.js';

type Expression = (context: Record<string, unknown>) => unknown;

interface CompiledRule {
  rule: EventRuleSetting;
  recipient: Expression;
  contextVars: [string, Expression][];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Event rules: a domain event becomes a notification. Recipient and variables are CEL over
// `event` (the payload), compiled at boot: no eval, always terminating.
@Injectable()
export class EventRules implements OnModuleInit {
  private readonly rules: CompiledRule[] = [];
  private readonly problems: string[] = [];

  constructor(
    private readonly notifications: NotificationService,
    private readonly emitter: EventEmitter2,
    private readonly logger: PinoLogger,
    config: AppConfig,
  ) {
    logger.setContext(EventRules.name);
    const problems = this.problems;
    const compile = (rule: EventRuleSetting, what: string, source: string): Expression => {
      try {
        return parse(source) as Expression;
      } catch (error) {
        problems.push(`settings.notifications.eventRules: ${rule.eventName} → ${rule.template}: ${what} does not compile: ${(error as Error).message.split('\n')[0]}`);
        return () => undefined;
      }
    };
    for (const rule of config.settings.notifications.eventRules) {
      this.rules.push({
        rule,
        recipient: compile(rule, 'recipient', rule.recipient),
        contextVars: Object.entries(rule.contextVars).map(([name, source]) => [name, compile(rule, `contextVars.${name}`, String(source))]),
      });
    }
    if (problems.length) return;
    for (const name of new Set(this.rules.map((r) => r.rule.eventName))) {
      this.emitter.on(name, (payload: Record<string, unknown>) => this.apply(name, payload));
    }
  }

  // Reported at init, not from the constructor: a refused boot then closes the app, which
  // releases the database pool and Redis connections already opened (see createApp).
  onModuleInit(): void {
    if (this.problems.length) throw new ConfigError(this.problems);
  }

  // Every rule for the event; one rule failing does not stop the others.
  async apply(eventName: string, payload: Record<string, unknown>): Promise<void> {
    for (const { rule, recipient, contextVars } of this.rules.filter((r) => r.rule.eventName === eventName)) {
      try {
        const context = { event: payload };
        const to = plain(recipient(context));
        if (typeof to !== 'string' || !to) throw new Error('recipient is not a string');
        const storeId = payload.storeId;
        if (typeof storeId !== 'string') throw new Error('the event has no storeId');
        await this.notifications.send({
          storeId,
          channel: rule.channel,
          template: rule.template,
          ...(UUID.test(to) ? { userId: to } : { recipient: to }),
          contextVars: Object.fromEntries(contextVars.map(([name, expression]) => [name, plain(expression(context))])),
        });
      } catch (err) {
        this.logger.error({ err, eventName, template: rule.template }, 'event rule failed');
      }
    }
  }
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
