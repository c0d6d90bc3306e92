import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ApiDoneAliases } from '../../delivery/broker/api-done.js';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { resolveTopicAlias } from '../../delivery/broker/topics.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { StoreService } from '../../identity/store/store.service.js';
import { channelFor, forwardChannelProblem } from './realtime.channels.js';
import { eventName, isEncrypted, MAX_NAME_LENGTH } from './realtime.limits.js';
import { RealtimeChannelService } from './realtime.service.js';
import { RealtimeSection } from './realtime.settings.js';

interface ForwardRule {
  brokerTopic: string;
  channel: string;
  event: string;
}

// Any data object may be named in a forward rule's alias: backend teams publish their own.
class AnyObject extends Set<string> {
  override has(): boolean {
    return true;
  }
}

const LONGEST_CODENAME = 40;

// `realtimeChannel.forwardRules`: the service's own events, sent to the admin channel of the
// event's store. Acting on what this process published (not on a broker subscription) sends
// each event once, whatever the number of replicas. An event without a store is not forwarded.
@Injectable()
export class RealtimeForwarder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RealtimeForwarder');
  private readonly rules: ForwardRule[] = [];
  private readonly problems: string[] = [];
  private stop: (() => void) | undefined;

  constructor(
    private readonly channel: RealtimeChannelService,
    private readonly publisher: EventPublisher,
    private readonly stores: StoreService,
    config: AppConfig,
    private readonly checks: BootChecks,
    aliases: ApiDoneAliases,
  ) {
    const rules = config.section(RealtimeSection).realtimeChannel?.forwardRules ?? [];
    rules.forEach((rule, i) => {
      const at = `settings.realtimeChannel.forwardRules[${i}]`;
      aliases.declare(`${at}.topic`, rule.topic);
      const resolved = resolveTopicAlias(rule.topic, config.env.SERVICE_CODENAME, new AnyObject());
      if ('error' in resolved) this.problems.push(`${at}.topic: ${resolved.error}`);
      const channelProblem = forwardChannelProblem(rule.channel);
      if (channelProblem) {
        this.problems.push(`${at}.channel: ${channelProblem}`);
      } else if (channelFor(rule.channel, 'x'.repeat(LONGEST_CODENAME)).length > MAX_NAME_LENGTH) {
        this.problems.push(`${at}.channel: longer than ${MAX_NAME_LENGTH} characters with a ${LONGEST_CODENAME}-character store codename`);
      } else if (isEncrypted(rule.channel) && config.section(RealtimeSection).realtimeChannel?.encryptionMasterKeyBase64 === undefined) {
        this.problems.push(`${at}.channel: an encrypted channel needs encryptionMasterKeyBase64`);
      }
      try {
        eventName(rule.event);
      } catch (error) {
        this.problems.push(`${at}.event: ${(error as AppError).message}`);
      }
      if (!('error' in resolved)) this.rules.push({ brokerTopic: resolved.topic, channel: rule.channel, event: rule.event });
    });
  }

  // Reported at init, with every module's settings problems (BootChecks): nothing is forwarded
  // on a boot that will stop.
  onModuleInit(): void {
    this.checks.report(this.problems);
    if (this.problems.length) return;
    if (this.rules.length) this.stop = this.publisher.onPublished((topic, data) => void this.forward(topic, data));
  }

  onApplicationShutdown(): void {
    this.stop?.();
  }

  private async forward(topic: string, data: Record<string, unknown>): Promise<void> {
    const rules = this.rules.filter((r) => r.brokerTopic === topic);
    if (!rules.length) return;
    const storeId = data.storeId;
    if (typeof storeId !== 'string') return;
    try {
      const store = await this.stores.findById(storeId);
      if (!store) return;
      for (const rule of rules) {
        await this.channel.triggerEvent({ channel: channelFor(rule.channel, store.codename), event: rule.event, data }).catch((err: unknown) => {
          this.logger.error({ err, topic, event: rule.event }, 'could not forward an event to the realtime channel');
        });
      }
    } catch (err) {
      this.logger.error({ err, topic }, 'could not forward an event to the realtime channel');
    }
  }
}
