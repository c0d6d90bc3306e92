import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  AppConfig,
  AppError,
  AuditLog,
  afterCommit,
  auditActor,
  Clock,
  EventPublisher,
  NotificationService,
  pageRequest,
  Transactions,
  type AuditContext,
  type PageQuery,
  type PageRequest,
  type SessionData,
} from 'svc-auth/extension';
import { SupportTicketSettings } from './settings.js';
import type { TicketEntity } from './ticket.entity.js';
import { ticketNotFound } from './tickets.catalogue.js';
import { TicketRepository } from './tickets.repository.js';
import { PagingSection } from '../../src/kernel/paging.settings.js';

// The tickets' rules. Each change writes its audit entry in its own transaction, and tells the
// event channel once it has committed.
@Injectable()
export class TicketsService {
  constructor(
    private readonly tickets: TicketRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly events: EventPublisher,
    private readonly notifications: NotificationService,
    private readonly settings: SupportTicketSettings,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  page(query: PageQuery): PageRequest {
    return pageRequest(query, this.config.section(PagingSection).paging);
  }

  // A ticket of its own for the caller (or, from the listener, for a new user: `by` is null).
  open(storeId: string, ownerId: string, subject: string, by: SessionData | null, context: AuditContext = {}, id: string = randomUUID()): Promise<TicketEntity> {
    return this.transactions.run(async (tx) => {
      if ((await this.tickets.countOpen(storeId, ownerId, tx)) >= this.settings.maxOpenPerUser) {
        throw new AppError('TooManyOpenTickets', `at most ${this.settings.maxOpenPerUser} open tickets per user`);
      }
      const ticket = await this.tickets.insert(storeId, { id, ownerId, subject, status: 'open' }, tx);
      const actor = by ? auditActor(by) : { type: 'system' as const, id: null };
      await this.audit.record({ storeId, action: 'ticket.opened', outcome: 'success', actor, target: { type: 'ticket', id: ticket.id } }, context, tx);
      afterCommit(tx, () => void this.events.publishApiEvent('ticket', 'opened', { id: ticket.id, storeId, _owner: ownerId, subject }).catch(() => undefined));
      return ticket;
    });
  }

  async close(storeId: string, id: string, by: SessionData, context: AuditContext): Promise<TicketEntity> {
    const closed = await this.transactions.run(async (tx) => {
      const ticket = await this.tickets.find(storeId, id, tx);
      if (!ticket) throw ticketNotFound();
      if (!(await this.tickets.close(storeId, id, this.clock.now(), tx))) throw new AppError('TicketAlreadyClosed', 'the ticket is closed');
      await this.audit.record({ storeId, action: 'ticket.closed', outcome: 'success', actor: auditActor(by), target: { type: 'ticket', id } }, context, tx);
      return (await this.tickets.find(storeId, id, tx))!;
    });
    await this.events.publishApiEvent('ticket', 'closed', { id, storeId, _owner: closed.ownerId, subject: closed.subject });
    await this.notifications.send({ storeId, channel: 'inApp', template: 'ticketClosed', userId: closed.ownerId, contextVars: { subject: closed.subject } });
    return closed;
  }

  // The ticket named `id`, opened by the system unless it exists (a repeated event).
  async openOnce(id: string, storeId: string, ownerId: string, subject: string): Promise<TicketEntity> {
    return (await this.tickets.find(storeId, id)) ?? this.open(storeId, ownerId, subject, null, {}, id);
  }

  list(storeId: string, ownerId: string | null, page: PageRequest): Promise<[TicketEntity[], number]> {
    return this.tickets.list(storeId, ownerId, page);
  }
}
