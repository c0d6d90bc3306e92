import { Injectable, Logger } from '@nestjs/common';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { AppError } from '../../kernel/errors.js';
import type { SessionData } from '../../kernel/principal.js';
import { StoreService } from '../../identity/store/store.service.js';
import { checkChannelAccess, parseChannel } from './realtime.channels.js';
import { channelName } from './realtime.limits.js';
import { RealtimeChannelService } from './realtime.service.js';

// The broker topic webhook events are published on: `<svc>-realtime-webhook` (alias
// `realtime.webhook`).
export const WEBHOOK_OBJECT = 'realtime';
export const WEBHOOK_VERB = 'webhook';

// What the client routes ask of the realtime channel, for the logged-in caller: channel
// authorization within its own store, user authentication, and the provider's webhooks.
@Injectable()
export class RealtimeAccessService {
  private readonly logger = new Logger('RealtimeAccess');

  constructor(
    private readonly channel: RealtimeChannelService,
    private readonly publisher: EventPublisher,
    private readonly stores: StoreService,
  ) {}

  // A private-/presence- channel of the caller's store; presence members are shown by id and
  // name only (every member sees them).
  authorizeChannel(session: SessionData, storeCodename: string, socketId: string, channel: string) {
    this.channel.assertEnabled();
    checkChannelAccess(session, storeCodename, channelName(channel));
    const presence = channel.startsWith('presence-');
    const member = presence ? { user_id: session.userId, user_info: session.fullname ? { name: session.fullname } : {} } : undefined;
    return this.channel.authorizeChannel(socketId, channel, member);
  }

  authenticateUser(session: SessionData, socketId: string) {
    this.channel.assertEnabled();
    return this.channel.authenticateUser(socketId, { id: session.userId, ...(session.fullname && { name: session.fullname }) });
  }

  // A signed webhook becomes one broker event per provider event, carrying the store of its
  // channel (so subscribers' tenant filters apply). A bad signature is refused, nothing published.
  async receiveWebhook(headers: Record<string, unknown>, rawBody: Buffer | undefined): Promise<{ received: number }> {
    this.channel.assertEnabled();
    const result = this.channel.validateWebhook(headers, rawBody?.toString('utf8') ?? '');
    if (!result.valid) throw new AppError('RealtimeWebhookInvalid', 'the webhook signature, key or body is not valid');
    const storeIds = new Map<string, string | undefined>();
    for (const event of result.events) {
      const codename = event.channel ? parseChannel(event.channel)?.codename : undefined;
      if (codename && !storeIds.has(codename)) storeIds.set(codename, await this.stores.resolve(codename).then((s) => s.id, () => undefined));
      const storeId = codename ? storeIds.get(codename) : undefined;
      await this.publisher.publishApiEvent(WEBHOOK_OBJECT, WEBHOOK_VERB, { ...event, timeMs: result.timeMs, ...(storeId && { storeId }) });
    }
    this.logger.debug({ events: result.events.length }, 'realtime webhook received');
    return { received: result.events.length };
  }
}
