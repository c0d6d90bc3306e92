import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DomainEventDispatcher } from './domain-event-dispatcher.js';
import { DomainEvents } from './domain-events.js';

// The domain events every layer emits and listens to (domain-events.ts): global, as the kernel's
// vocabulary is. The outbox's table is the database module's (platform/database/outbox.ts).
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [DomainEventDispatcher, DomainEvents],
  exports: [DomainEvents, DomainEventDispatcher],
})
export class DomainEventsModule {}
