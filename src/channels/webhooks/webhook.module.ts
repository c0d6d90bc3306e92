import { Module } from '@nestjs/common';
import { BrokerModule } from '../../delivery/broker/broker.module.js';
import { NotificationModule } from '../../delivery/notification/notification.module.js';
import { InProcessQueue } from '../../delivery/queue/in-process-queue.js';
import type { JobQueue } from '../../delivery/queue/job-queue.js';
import { StoreModule } from '../../identity/store/store.module.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { EventChannelModule } from '../events/event-channel.module.js';
import { WebhookController } from './webhook.controller.js';
import { WEBHOOK_QUEUE, WebhookDeliveries } from './webhook-deliveries.js';
import { WebhookRepository } from './webhook.repository.js';
import { WebhookService } from './webhook.service.js';

// Attempts under way at once per process, over every endpoint (each endpoint has its own, lower, limit).
const CONCURRENCY = 32;

// The deliveries' queue: BullMQ on Redis (shared by the replicas; BullMQ is loaded only then),
// in process otherwise. One attempt per job: the retry schedule is the delivery row's.
const queueProvider = {
  provide: WEBHOOK_QUEUE,
  inject: [AppConfig],
  useFactory: async (config: AppConfig): Promise<JobQueue> => {
    const { REDIS_URL, PROJECT_CODENAME, SERVICE_CODENAME } = config.env;
    if (!REDIS_URL) return new InProcessQueue(CONCURRENCY, 1, 0);
    const { BullMqQueue } = await import('../../delivery/queue/bullmq-queue.js');
    return new BullMqQueue({ name: 'webhooks', redisUrl: REDIS_URL, prefix: `${PROJECT_CODENAME}:${SERVICE_CODENAME}:bull`, concurrency: CONCURRENCY, maxAttempts: 1, backoffMs: 0 });
  },
};

// Webhooks: a store's endpoints, and the signed, retried delivery of its events to them.
@Module({
  imports: [BrokerModule, NotificationModule, StoreModule, EventChannelModule],
  controllers: [WebhookController],
  providers: [queueProvider, WebhookRepository, WebhookService, WebhookDeliveries],
})
export class WebhookModule {}
