import { Injectable, Module } from '@nestjs/common';
import { BrokerModule, NotificationModule, OnDomainEvent, type DomainEvent } from 'svc-auth/extension';
import { SupportTicketSettings } from './settings.js';
import { TicketsController } from './tickets.controller.js';
import { TicketRepository } from './tickets.repository.js';
import { TicketsService } from './tickets.service.js';

// A new user of a store gets a welcome ticket when the settings ask for one. Events arrive at
// least once: the ticket is named after the event, so a repeat finds it and adds none.
@Injectable()
export class WelcomeTickets {
  constructor(
    private readonly tickets: TicketsService,
    private readonly settings: SupportTicketSettings,
  ) {}

  @OnDomainEvent('user.created')
  async onUserCreated(event: DomainEvent<'user.created'>): Promise<void> {
    if (!this.settings.welcomeTicket) return;
    await this.tickets.openOnce(event.id, event.storeId, event.payload.userId, 'Welcome! Reply here if you need help.');
  }
}

@Module({
  imports: [BrokerModule, NotificationModule],
  controllers: [TicketsController],
  providers: [TicketRepository, TicketsService, WelcomeTickets],
})
export class TicketsModule {}
