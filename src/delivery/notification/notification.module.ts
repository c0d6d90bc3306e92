import { Global, Module } from '@nestjs/common';
import { BrokerModule } from '../broker/broker.module.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { EventRules } from './event-rules.js';
import { InboxController } from './inbox.controller.js';
import { InProcessQueue } from '../queue/in-process-queue.js';
import { NOTIFICATION_QUEUE, NotificationQueue } from './notification-queue.js';
import { NotificationRepository } from './notification.repository.js';
import { NotificationService } from './notification.service.js';
import { NotificationWorker } from './notification.worker.js';
import { ProviderRegistry } from './provider-registry.js';
import { TemplateService } from './template.service.js';
import { NotificationSection } from './notification.settings.js';

// BullMQ (~25 MB loaded) only with Redis: without REDIS_URL it is never imported.
const queueProvider = {
  provide: NotificationQueue,
  inject: [AppConfig],
  useFactory: async (config: AppConfig): Promise<NotificationQueue> => {
    const { concurrency, maxAttempts, backoffMs, lockDurationMs } = config.section(NotificationSection).notifications.worker;
    const { REDIS_URL, PROJECT_CODENAME, SERVICE_CODENAME } = config.env;
    if (!REDIS_URL) return new InProcessQueue(concurrency, maxAttempts, backoffMs);
    const { BullMqQueue } = await import('../queue/bullmq-queue.js');
    return new BullMqQueue({ name: NOTIFICATION_QUEUE, redisUrl: REDIS_URL, prefix: `${PROJECT_CODENAME}:${SERVICE_CODENAME}:bull`, concurrency, maxAttempts, backoffMs, lockDurationMs });
  },
};

// The delivery providers, for every module: an extension injects the registry to register its
// own in onModuleInit.
@Global()
@Module({
  providers: [
    {
      provide: ProviderRegistry,
      inject: [AppConfig, BootChecks],
      useFactory: (config: AppConfig, checks: BootChecks): Promise<ProviderRegistry> => ProviderRegistry.create(config, checks),
    },
  ],
  exports: [ProviderRegistry],
})
export class NotificationProvidersModule {}

@Module({
  imports: [BrokerModule, NotificationProvidersModule],
  controllers: [InboxController],
  providers: [queueProvider, NotificationRepository, NotificationService, NotificationWorker, TemplateService, EventRules],
  exports: [NotificationService],
})
export class NotificationModule {}
