import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { AppConfig } from '../../platform/config/app-config.js';
import type { ChannelName } from './notification.settings.js';
import { Metrics } from '../../kernel/metrics.js';
import { Recipients } from '../../kernel/recipients.js';
import type { DeliveryAttempt, NotificationEntity } from './notification.entity.js';
import { RetryLater } from '../queue/job-queue.js';
import { NotificationQueue } from './notification-queue.js';
import { NotificationRepository } from './notification.repository.js';
import { ProviderRegistry } from './provider-registry.js';
import { ProviderError } from './providers/provider.js';
import { acceptedLanguages, TemplateService } from './template.service.js';

// Queued rows older than this are enqueued again (a crash between insert and enqueue).
const SWEEP_INTERVAL_MS = 60_000;

// Delivers one notification per job: render in the recipient's language, try the channel's
// providers then its fallbacks, record every attempt. A delivery is recorded before the job
// completes, so a retried job finds the row delivered and sends nothing again.
@Injectable()
export class NotificationWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly queue: NotificationQueue,
    private readonly notifications: NotificationRepository,
    private readonly templates: TemplateService,
    private readonly providers: ProviderRegistry,
    private readonly recipients: Recipients,
    private readonly config: AppConfig,
    private readonly logger: PinoLogger,
    private readonly metrics: Metrics,
  ) {
    logger.setContext(NotificationWorker.name);
    metrics.gauge(`${metrics.prefix}notification_queue_depth`, 'Notification jobs waiting to run (retries included).', [], async (set) => set({}, await queue.depth()));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.start((id, attempt, maxAttempts) => this.deliver(id, attempt, maxAttempts));
    await this.sweep();
    this.sweeper = setInterval(() => void this.sweep().catch((err: unknown) => this.logger.warn({ err }, 'sweep failed')), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.queue.close();
    await this.providers.close();
  }

  // Only rows older than a sweep interval: younger ones have a job in flight somewhere.
  private async sweep(): Promise<void> {
    const before = new Date(Date.now() - SWEEP_INTERVAL_MS);
    for (const id of await this.notifications.queuedIds(before, 1000)) await this.queue.enqueue(id);
  }

  async deliver(id: string, attempt: number, maxAttempts: number): Promise<void> {
    const n = await this.notifications.findForDelivery(id);
    if (!n || n.status !== 'queued') return; // delivered or failed already: nothing to do

    const target = await this.target(n);
    if ('problem' in target) return this.fail(n, [{ provider: '-', outcome: 'failed', error: target.problem, permanent: true, at: now() }]);
    const context = { ...n.contextVars, ...n.secretVars, user: target.user, store: target.store };
    const message = this.templates.render(n.template, n.channel, target.language, context);

    if (n.channel === 'inApp') {
      // The row is the delivery: the inbox reads it.
      await this.notifications.markDelivered(n.storeId, n.id, 'inApp', [{ provider: 'inApp', outcome: 'delivered', at: now() }], message);
      this.metrics.notificationDelivery(n.channel, 'delivered');
      return;
    }
    const attempts: DeliveryAttempt[] = [];
    for (const provider of this.providers.forChannel(n.channel)) {
      try {
        await provider.send({ notificationId: n.id, channel: n.channel, to: target.address, subject: message.subject, body: message.body, data: message.data });
      } catch (error) {
        const e = error instanceof ProviderError ? error : new ProviderError(String((error as Error)?.message ?? error));
        attempts.push({ provider: provider.name, outcome: 'failed', error: e.message.slice(0, 500), permanent: e.permanent, at: now() });
        continue;
      }
      attempts.push({ provider: provider.name, outcome: 'delivered', at: now() });
      // Only in-app content is kept: other channels' text may carry the secrets just erased.
      await this.notifications.markDelivered(n.storeId, n.id, provider.name, attempts, null);
      this.metrics.notificationDelivery(n.channel, 'delivered');
      return;
    }
    const permanent = attempts.length > 0 && attempts.every((a) => a.permanent);
    if (permanent || attempt >= maxAttempts || !attempts.length) {
      if (!attempts.length) attempts.push({ provider: '-', outcome: 'failed', error: `no provider for channel ${n.channel}`, permanent: true, at: now() });
      return this.fail(n, attempts);
    }
    await this.notifications.recordAttempts(n.storeId, n.id, attempts, false);
    this.metrics.notificationDelivery(n.channel, 'retry');
    throw new RetryLater(`attempt ${attempt} of ${maxAttempts} failed`);
  }

  private async fail(n: NotificationEntity, attempts: DeliveryAttempt[]): Promise<void> {
    await this.notifications.recordAttempts(n.storeId, n.id, attempts, true);
    this.metrics.notificationDelivery(n.channel, 'failed');
    this.logger.warn({ notificationId: n.id, channel: n.channel }, 'notification failed');
  }

  // Address, language and the template's view of the user and store.
  private async target(n: NotificationEntity) {
    const store = await this.recipients.store(n.storeId);
    const user = n.userId ? await this.recipients.user(n.storeId, n.userId) : null;
    if (n.userId && !user) return { problem: 'the recipient user no longer exists' };
    const address = n.recipient ?? (user ? addressOf(n.channel, user.id, user.email, user.mobile) : null);
    if (!address) return { problem: `the recipient has no address for ${n.channel}` };
    const language = this.templates.resolveLanguage(n.template, n.channel, [user?.language, store?.language, ...acceptedLanguages(n.acceptLanguage)]);
    if (!language) return { problem: `template ${n.template} has no ${n.channel} version` };
    return {
      address,
      language,
      user: user && { id: user.id, fullname: user.fullname, name: user.name, surname: user.surname, email: user.email, mobile: user.mobile },
      store: store && { name: store.name, fullname: store.fullname, codename: store.codename },
    };
  }
}

function addressOf(channel: ChannelName, userId: string, email: string | null, mobile: string | null): string | null {
  if (channel === 'email') return email;
  if (channel === 'sms' || channel === 'whatsapp') return mobile;
  return userId; // push (external user id) and inApp
}

function now(): string {
  return new Date().toISOString();
}
