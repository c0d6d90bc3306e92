import { Global, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { DomainEvents } from '../../kernel/domain-events.js';

@Global()
@Module({
  imports: [EventEmitterModule.forRoot({ wildcard: false, ignoreErrors: true })],
  providers: [DomainEvents],
  exports: [DomainEvents],
})
export class EventsModule {}
