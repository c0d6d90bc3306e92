import { Module } from '@nestjs/common';
import { ApiKeyModule } from '../../identity/apikey/api-key.module.js';
import { AuthModule } from '../../identity/auth/auth.module.js';
import { BrokerModule } from '../../delivery/broker/broker.module.js';
import { StoreModule } from '../../identity/store/store.module.js';
import { UserModule } from '../../identity/user/user.module.js';
import { EventAccessService } from './event-access.service.js';
import { EventBridge } from './event-bridge.js';
import { EventHub } from './event-hub.js';
import { EventPrincipals } from './event-principals.js';
import { EventsController } from './events.controller.js';
import { EventsGateway } from './events.gateway.js';
import { EventsService } from './events.service.js';

// The event subscription channel: Socket.IO namespaces /events/{name} and SSE streams
// /events/{name}/stream over the broker, with one authorization for both, and the bridge that
// puts the domain events on the broker (EventBridge, an `@OnDomainEvent` listener).
@Module({
  imports: [BrokerModule, AuthModule, ApiKeyModule, StoreModule, UserModule],
  controllers: [EventsController],
  providers: [EventAccessService, EventPrincipals, EventHub, EventsService, EventsGateway, EventBridge],
  exports: [EventsService, EventBridge],
})
export class EventChannelModule {}
