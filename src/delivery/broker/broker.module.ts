import { Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../../platform/config/app-config.js';
import { ApiDone, ApiDoneAliases } from './api-done.js';
import { Broker } from './broker.js';
import { EventPublisher } from './event-publisher.js';
import { MemoryBroker } from './memory-broker.js';
import { RedisStreamsBroker } from './redis-streams-broker.js';
import { BrokerSection } from './broker.settings.js';

const brokerProvider = {
  provide: Broker,
  inject: [AppConfig],
  useFactory: (config: AppConfig): Broker => {
    const logger = new Logger('Broker');
    const onError = (err: unknown) => logger.error({ err }, 'event broker');
    const { REDIS_URL, PROJECT_CODENAME } = config.env;
    return REDIS_URL
      ? new RedisStreamsBroker({ url: REDIS_URL, prefix: `${PROJECT_CODENAME}:events:`, maxLen: config.section(BrokerSection).eventChannel.streamMaxLen, onError })
      : new MemoryBroker(onError);
  },
};

// The broker the whole service shares: in-memory in embedded mode, Redis Streams with REDIS_URL.
// Every successful POST / PUT / PATCH / DELETE publishes its `<svc>-<apiname>-done` event.
@Module({
  imports: [DiscoveryModule],
  providers: [brokerProvider, EventPublisher, ApiDoneAliases, ApiDone],
  exports: [Broker, EventPublisher, ApiDone, ApiDoneAliases],
})
export class BrokerModule implements OnApplicationShutdown {
  constructor(private readonly broker: Broker) {}

  async onApplicationShutdown(): Promise<void> {
    await this.broker.close();
  }
}
